CREATE TABLE `import_links` (
	`user_id` text NOT NULL,
	`source_index` blob NOT NULL,
	`target_id` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `import_links_user_source` ON `import_links` (`user_id`,`source_index`);