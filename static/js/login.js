// The #anchor of a deep link survives login: a redirect keeps the fragment in the address bar of the login page,
// but the server never sees it, so it is added to the form's `next` here.
(function () {
  "use strict";
  var next = document.querySelector('form input[name="next"]');
  if (next && window.location.hash && next.value && next.value.indexOf("#") === -1) {
    next.value = next.value + window.location.hash;
  }
})();
