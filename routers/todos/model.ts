// To-dos (DECISIONS §5; spec §3 rule 4, §4.5 heading rows). Relations (container, heading, tags),
// the sort key and server times are plaintext; everything else sits in one sealed blob. Every
// change records its `todo.*` event in the same transaction (spec §6.2).
//
// The model's parts, one file each: rows.ts (the row, its sealed content, presenting and writing
// it), writes.ts (create, update, move, trash, delete), checklist.ts (checklist items),
// completion.ts (complete, cancel, reopen, recurrence), reads.ts (get, list, counts). Importers
// use this file.
export { openTodo, presentTodo, presentTodos, tagsOf, linksOfMany, toTodo, todayOf, type TodoRow, type TodoSealed, type TodoStatus } from './rows.js';
export { createTodo, deleteTodo, moveTodo, resolveBand, trashTodo, updateTodo, type CreateTodo, type UpdateTodo } from './writes.js';
export { addChecklistItem, deleteChecklistItem, moveChecklistItem, updateChecklistItem } from './checklist.js';
export { finishTodo, finishTodoTx, reopenTodo, type Finished } from './completion.js';
export { accountIndex, getTodo, listTodos, openCounts, todoListQuery, todoWithTags, todosUnderHeading, type ListShape, type TodoListQuery } from './reads.js';
