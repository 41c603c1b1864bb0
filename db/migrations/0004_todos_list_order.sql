ALTER TABLE `todos` ADD `parent_key` text GENERATED ALWAYS AS (coalesce("parent_id", '')) VIRTUAL NOT NULL;--> statement-breakpoint
ALTER TABLE `todos` ADD `heading_ref` text GENERATED ALWAYS AS (coalesce("heading_id", '')) VIRTUAL NOT NULL;--> statement-breakpoint
ALTER TABLE `todos` ADD `heading_key` text DEFAULT '' NOT NULL;--> statement-breakpoint
CREATE INDEX `todos_user_list_order` ON `todos` (`user_id`,`parent_key`,`heading_key`,`heading_ref`,`sort_key`,`id`);--> statement-breakpoint
-- heading_key: a copy of the to-do's heading's sort key ('' without a heading), kept by the
-- database so no write path can forget it (db/schema/tasks.ts).
UPDATE `todos` SET `heading_key` = coalesce((SELECT `sort_key` FROM `headings` WHERE `headings`.`id` = `todos`.`heading_id`), '') WHERE `heading_id` IS NOT NULL;--> statement-breakpoint
CREATE TRIGGER `todos_heading_key_insert` AFTER INSERT ON `todos` WHEN new.`heading_id` IS NOT NULL BEGIN
  UPDATE `todos` SET `heading_key` = coalesce((SELECT `sort_key` FROM `headings` WHERE `id` = new.`heading_id`), '') WHERE `rowid` = new.`rowid`;
END;--> statement-breakpoint
CREATE TRIGGER `todos_heading_key_update` AFTER UPDATE OF `heading_id` ON `todos` WHEN new.`heading_id` IS NOT old.`heading_id` BEGIN
  UPDATE `todos` SET `heading_key` = coalesce((SELECT `sort_key` FROM `headings` WHERE `id` = new.`heading_id`), '') WHERE `rowid` = new.`rowid`;
END;--> statement-breakpoint
CREATE TRIGGER `headings_sort_key_update` AFTER UPDATE OF `sort_key` ON `headings` WHEN new.`sort_key` IS NOT old.`sort_key` BEGIN
  UPDATE `todos` SET `heading_key` = new.`sort_key` WHERE `user_id` = new.`user_id` AND `heading_id` = new.`id`;
END;
