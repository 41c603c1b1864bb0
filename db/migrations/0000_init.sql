CREATE TABLE `credentials` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`kind` text NOT NULL,
	`secret_hash` blob NOT NULL,
	`wrapped_key` blob,
	`scopes` text NOT NULL,
	`sealed` blob,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`last_used_at` integer,
	`revoked_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `credentials_secret_hash` ON `credentials` (`secret_hash`);--> statement-breakpoint
CREATE INDEX `credentials_user_kind` ON `credentials` (`user_id`,`kind`,`created_at`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`email_index` blob NOT NULL,
	`sealed` blob NOT NULL,
	`pw_salt` blob NOT NULL,
	`pw_params` text NOT NULL,
	`pw_verifier` blob NOT NULL,
	`pw_wrapped_key` blob NOT NULL,
	`webhooks_disabled_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_index` ON `users` (`email_index`);--> statement-breakpoint
CREATE TABLE `settings` (
	`user_id` text PRIMARY KEY NOT NULL,
	`sealed` blob NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `tags` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`name_index` blob NOT NULL,
	`sort_key` text NOT NULL,
	`sealed` blob NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tags_user_name` ON `tags` (`user_id`,`name_index`);--> statement-breakpoint
CREATE INDEX `tags_user_order` ON `tags` (`user_id`,`sort_key`,`id`);--> statement-breakpoint
CREATE INDEX `tags_user_updated` ON `tags` (`user_id`,`updated_at`);