// The /app console's HTML (issue 17 item 5): static markup, the script from /app/app.js, the
// stylesheet of the authorize page. Everything it does goes through /trpc with a session token.
export const CONSOLE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Cairn console</title>
<link rel="stylesheet" href="/oauth/static/style.css">
<script src="/app/app.js" defer></script>
</head>
<body>
<main>
<h1>Cairn console</h1>
<section id="signin">
<h2>Sign in</h2>
<form id="signin-form">
<label>Email <input type="email" id="email" autocomplete="username" required></label>
<label>Password <input type="password" id="password" autocomplete="current-password" required></label>
<button type="submit" id="signin-button">Sign in</button>
</form>
<p id="signin-status"></p>
</section>
<div id="signed-in" hidden>
<p><button type="button" id="signout">Sign out</button></p>
<section>
<h2>Approve an app</h2>
<form id="code-form">
<label>Code shown on the app's page <input type="text" id="code" inputmode="numeric" autocomplete="off" placeholder="123-456-789"></label>
<button type="submit" id="lookup">Look up</button>
</form>
<div id="approval" hidden>
<p class="warning" id="approval-warning"></p>
<p id="approval-started"></p>
<p>App name given at registration: <strong id="approval-app"></strong> <span class="badge">unverified</span></p>
<p class="subtitle">The app's page returns to <span id="approval-callback" class="callback"></span> (this does not show who started the request)</p>
<p>Grant these scopes (untick to grant fewer):</p>
<div id="approval-scopes"></div>
<p id="approval-other-network" hidden><label><input type="checkbox" id="confirm-other-network"> <span id="approval-other-network-text"></span></label></p>
<button type="button" id="approve">Approve</button> <button type="button" id="deny">Deny</button>
</div>
<p id="approve-status"></p>
</section>
<section>
<h2>Connected apps</h2>
<table><thead><tr><th>App</th><th>Scopes</th><th>Connected</th><th>Last used</th><th></th></tr></thead><tbody id="grants"></tbody></table>
</section>
<section>
<h2>Personal tokens and app passwords</h2>
<table><thead><tr><th>Name</th><th>Opens</th><th>Scopes</th><th>Expires</th><th></th></tr></thead><tbody id="keys"></tbody></table>
<p id="lists-status"></p>
<h3>Create a personal token or an app password</h3>
<form id="new-key-form">
<label>Name <input type="text" id="new-key-name" required maxlength="256" placeholder="app password for my phone"></label>
<label>For <select id="new-key-audience"><option value="rest" selected>the API (/v1, /trpc): choose its scopes</option><option value="dav">a calendar or tasks app (CalDAV app password: to-dos and lists)</option><option value="mcp">an AI assistant (/mcp): choose its scopes</option></select></label>
<div id="new-key-scopes"></div>
<label>Expires after <select id="new-key-days"><option value="30">30 days</option><option value="90" selected>90 days</option><option value="180">180 days</option><option value="365">365 days</option></select></label>
<button type="submit" id="new-key-create">Create</button>
</form>
<p id="new-key-status"></p>
<p id="new-key-shown" hidden>Your new token: <span id="new-key-secret" class="secret"></span></p>
</section>
</div>
</main>
</body>
</html>`;
