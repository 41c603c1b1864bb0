CREATE TABLE `attachments` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`parent_type` text NOT NULL,
	`parent_id` text NOT NULL,
	`note_id` text,
	`sealed` blob NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`note_id`) REFERENCES `notes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `attachments_user_order` ON `attachments` (`user_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `attachments_user_parent` ON `attachments` (`user_id`,`parent_type`,`parent_id`);--> statement-breakpoint
CREATE INDEX `attachments_user_note` ON `attachments` (`user_id`,`note_id`);--> statement-breakpoint
CREATE INDEX `attachments_user_updated` ON `attachments` (`user_id`,`updated_at`);