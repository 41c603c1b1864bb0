CREATE TABLE `dav_resources` (
	`todo_id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`name_index` blob,
	`uid_index` blob,
	`sealed` blob NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`todo_id`) REFERENCES `todos`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `dav_resources_user_name` ON `dav_resources` (`user_id`,`name_index`);--> statement-breakpoint
CREATE INDEX `dav_resources_user_uid` ON `dav_resources` (`user_id`,`uid_index`);--> statement-breakpoint
CREATE TABLE `dav_sync_snapshots` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`collection` text NOT NULL,
	`digest` text NOT NULL,
	`sealed` blob NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `dav_sync_snapshots_user_collection` ON `dav_sync_snapshots` (`user_id`,`collection`,`created_at`);