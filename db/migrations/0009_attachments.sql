CREATE TABLE `attachment_chunks` (
	`attachment_id` text NOT NULL,
	`idx` integer NOT NULL,
	`user_id` text NOT NULL,
	`sealed` blob NOT NULL,
	PRIMARY KEY(`attachment_id`, `idx`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `attachment_chunks_user` ON `attachment_chunks` (`user_id`);--> statement-breakpoint
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
CREATE INDEX `attachments_user_updated` ON `attachments` (`user_id`,`updated_at`);--> statement-breakpoint
CREATE TABLE `pending_uploads` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`started_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `pending_uploads_started` ON `pending_uploads` (`started_at`);