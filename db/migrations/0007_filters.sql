CREATE TABLE `filters` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`sort_key` text NOT NULL,
	`sealed` blob NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `filters_user_order` ON `filters` (`user_id`,`sort_key`,`id`);--> statement-breakpoint
CREATE INDEX `filters_user_updated` ON `filters` (`user_id`,`updated_at`);