// Preloaded (node --import) into the Cairn process the bench starts. It only watches the bench's
// IPC channel: when the channel closes (the bench ended or was killed), Cairn gets SIGTERM and
// shuts down the way it does for an operator. It does not touch requests.
if (process.channel) {
  process.channel.unref();
  process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}
