CREATE TABLE `oauth_clients` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`redirect_uris` text NOT NULL,
	`auth_method` text NOT NULL,
	`secret_hash` blob,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `oauth_grants` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`client_id` text NOT NULL,
	`scopes` text NOT NULL,
	`resource` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`last_used_at` integer,
	`revoked_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`client_id`) REFERENCES `oauth_clients`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `oauth_grants_user` ON `oauth_grants` (`user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `oauth_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`client_id` text NOT NULL,
	`redirect_uri` text NOT NULL,
	`scopes` text NOT NULL,
	`resource` text NOT NULL,
	`code_challenge` text NOT NULL,
	`state` text,
	`user_code_hash` blob NOT NULL,
	`wait_hash` blob NOT NULL,
	`wait_public_key` blob NOT NULL,
	`status` text NOT NULL,
	`user_id` text,
	`granted_scopes` text,
	`sealed_code` blob,
	`code_hash` blob,
	`wrapped_key` blob,
	`code_expires_at` integer,
	`grant_id` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`client_id`) REFERENCES `oauth_clients`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth_requests_user_code` ON `oauth_requests` (`user_code_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `oauth_requests_wait` ON `oauth_requests` (`wait_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `oauth_requests_code` ON `oauth_requests` (`code_hash`);--> statement-breakpoint
CREATE INDEX `oauth_requests_expires` ON `oauth_requests` (`expires_at`);--> statement-breakpoint
CREATE TABLE `oauth_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`grant_id` text NOT NULL,
	`user_id` text NOT NULL,
	`kind` text NOT NULL,
	`secret_hash` blob NOT NULL,
	`wrapped_key` blob,
	`audience` text NOT NULL,
	`predecessor_id` text,
	`rotated_at` integer,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `oauth_grants`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth_tokens_secret_hash` ON `oauth_tokens` (`secret_hash`);--> statement-breakpoint
CREATE INDEX `oauth_tokens_grant` ON `oauth_tokens` (`grant_id`,`kind`);