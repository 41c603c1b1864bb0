CREATE TABLE `import_jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`source` text NOT NULL,
	`dry_run` integer NOT NULL,
	`status` text NOT NULL,
	`done` integer NOT NULL,
	`total` integer NOT NULL,
	`counts` text,
	`error_code` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`finished_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `import_jobs_user` ON `import_jobs` (`user_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `import_jobs_status` ON `import_jobs` (`status`);--> statement-breakpoint
ALTER TABLE `import_links` ADD `id` text;--> statement-breakpoint
ALTER TABLE `import_links` ADD `sealed` blob;--> statement-breakpoint
CREATE UNIQUE INDEX `import_links_user_id` ON `import_links` (`user_id`,`id`);