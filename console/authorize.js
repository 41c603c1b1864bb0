// The authorize page's script (rest/oauth-pages.ts serves it at /oauth/static/authorize.js):
// polls POST /oauth/authorize/wait and, once the user decided on a trusted device, follows the redirect.
'use strict';
(function () {
  var status = document.getElementById('status');
  if (!status) return;
  var handle = status.getAttribute('data-wait');
  function poll() {
    fetch('/oauth/authorize/wait', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'handle=' + encodeURIComponent(handle), cache: 'no-store', credentials: 'omit' })
      .then(function (r) { return r.json(); })
      .then(function (a) {
        if (a.status === 'done') { status.textContent = 'Decided. Returning you to the app…'; window.location.assign(a.redirect); return; }
        if (a.status === 'gone') { status.textContent = 'This request is no longer valid. Start again from the app.'; return; }
        setTimeout(poll, 1500);
      })
      .catch(function () { setTimeout(poll, 4000); });
  }
  poll();
})();
