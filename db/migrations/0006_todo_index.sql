CREATE TABLE `todo_index_chunks` (
	`user_id` text NOT NULL,
	`id` text NOT NULL,
	`sealed` blob NOT NULL,
	PRIMARY KEY(`user_id`, `id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
