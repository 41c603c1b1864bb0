CREATE TABLE `inbox_items` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`sealed` blob NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `inbox_items_user_order` ON `inbox_items` (`user_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `inbox_items_user_updated` ON `inbox_items` (`user_id`,`updated_at`);