DROP INDEX `todo_tags_tag`;--> statement-breakpoint
DROP INDEX `todo_tags_user`;--> statement-breakpoint
CREATE INDEX `todo_tags_tag` ON `todo_tags` (`tag_id`,`user_id`);--> statement-breakpoint
CREATE INDEX `todo_tags_user` ON `todo_tags` (`user_id`,`todo_id`);--> statement-breakpoint
DROP INDEX `attachment_chunks_user`;--> statement-breakpoint
CREATE INDEX `attachment_chunks_user` ON `attachment_chunks` (`user_id`,`attachment_id`);