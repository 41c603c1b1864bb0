ALTER TABLE `webhook_deliveries` ADD `dropped` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_sub_due` ON `webhook_deliveries` (`webhook_id`,`status`,`next_attempt_at`);--> statement-breakpoint
ALTER TABLE `webhooks` ADD `timeouts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `held_until` integer;