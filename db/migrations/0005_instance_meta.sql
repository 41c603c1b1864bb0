CREATE TABLE `instance_meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
-- Issue 10: answers are stored with their change; a pending row can only be a leftover of the
-- old two-step scheme (a crash between claim and answer). It stored no answer: drop it.
DELETE FROM `idempotency_keys` WHERE `state` = 'pending';
