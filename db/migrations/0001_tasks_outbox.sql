CREATE TABLE `containers` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`kind` text NOT NULL,
	`parent_id` text,
	`sort_key` text NOT NULL,
	`sealed` blob NOT NULL,
	`trashed_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`parent_id`) REFERENCES `containers`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `containers_user_parent_order` ON `containers` (`user_id`,`parent_id`,`sort_key`,`id`);--> statement-breakpoint
CREATE INDEX `containers_user_updated` ON `containers` (`user_id`,`updated_at`);--> statement-breakpoint
CREATE TABLE `headings` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`project_id` text NOT NULL,
	`sort_key` text NOT NULL,
	`sealed` blob NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `containers`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `headings_user_project_order` ON `headings` (`user_id`,`project_id`,`sort_key`,`id`);--> statement-breakpoint
CREATE INDEX `headings_user_updated` ON `headings` (`user_id`,`updated_at`);--> statement-breakpoint
CREATE TABLE `todo_tags` (
	`todo_id` text NOT NULL,
	`tag_id` text NOT NULL,
	`user_id` text NOT NULL,
	`position` integer NOT NULL,
	PRIMARY KEY(`todo_id`, `tag_id`),
	FOREIGN KEY (`todo_id`) REFERENCES `todos`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tag_id`) REFERENCES `tags`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `todo_tags_tag` ON `todo_tags` (`tag_id`);--> statement-breakpoint
CREATE INDEX `todo_tags_user` ON `todo_tags` (`user_id`);--> statement-breakpoint
CREATE TABLE `todos` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`parent_id` text,
	`heading_id` text,
	`sort_key` text NOT NULL,
	`sealed` blob NOT NULL,
	`trashed_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`parent_id`) REFERENCES `containers`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`heading_id`) REFERENCES `headings`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `todos_user_band_order` ON `todos` (`user_id`,`parent_id`,`heading_id`,`sort_key`,`id`);--> statement-breakpoint
CREATE INDEX `todos_user_heading` ON `todos` (`user_id`,`heading_id`);--> statement-breakpoint
CREATE INDEX `todos_user_updated` ON `todos` (`user_id`,`updated_at`);--> statement-breakpoint
CREATE TABLE `outbox` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`user_id` text NOT NULL,
	`type` text NOT NULL,
	`object_type` text NOT NULL,
	`object_id` text NOT NULL,
	`occurred_at` integer NOT NULL,
	`dispatched_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `outbox_id` ON `outbox` (`id`);--> statement-breakpoint
CREATE INDEX `outbox_pending` ON `outbox` (`dispatched_at`,`seq`);--> statement-breakpoint
CREATE INDEX `outbox_user` ON `outbox` (`user_id`,`seq`);