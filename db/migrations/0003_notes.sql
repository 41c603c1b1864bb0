CREATE TABLE `note_folders` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`parent_id` text,
	`sort_key` text NOT NULL,
	`sealed` blob NOT NULL,
	`trashed_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`parent_id`) REFERENCES `note_folders`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `note_folders_user_parent_order` ON `note_folders` (`user_id`,`parent_id`,`sort_key`,`id`);--> statement-breakpoint
CREATE INDEX `note_folders_user_updated` ON `note_folders` (`user_id`,`updated_at`);--> statement-breakpoint
CREATE INDEX `note_folders_trashed` ON `note_folders` (`trashed_at`);--> statement-breakpoint
CREATE TABLE `note_versions` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`note_id` text NOT NULL,
	`seq` integer NOT NULL,
	`sealed` blob NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`note_id`) REFERENCES `notes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `note_versions_user_note_seq` ON `note_versions` (`user_id`,`note_id`,`seq`);--> statement-breakpoint
CREATE TABLE `notes` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`parent_id` text,
	`folder_id` text,
	`sort_key` text NOT NULL,
	`sealed` blob NOT NULL,
	`trashed_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`parent_id`) REFERENCES `containers`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`folder_id`) REFERENCES `note_folders`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `notes_user_band_order` ON `notes` (`user_id`,`parent_id`,`sort_key`,`id`);--> statement-breakpoint
CREATE INDEX `notes_user_folder` ON `notes` (`user_id`,`folder_id`);--> statement-breakpoint
CREATE INDEX `notes_user_updated` ON `notes` (`user_id`,`updated_at`);--> statement-breakpoint
CREATE INDEX `notes_trashed` ON `notes` (`trashed_at`);