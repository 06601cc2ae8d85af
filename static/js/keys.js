// Keyboard: "?" shows the keys, "/" focuses search, j/k move between messages or results, Enter follows the focused item's link.
// Loaded as a file (the Content-Security-Policy allows no inline script).
(function () {
  "use strict";

  function typingInField(event) {
    var el = event.target;
    if (!el || !el.tagName) return false;
    var tag = el.tagName.toLowerCase();
    return tag === "input" || tag === "textarea" || tag === "select" || el.isContentEditable;
  }

  function items() {
    // Notes hidden by the transcript toggle are skipped: j/k move between what is on screen.
    return Array.prototype.slice.call(document.querySelectorAll("[data-nav-item]")).filter(function (el) {
      return el.getClientRects().length > 0;
    });
  }

  function move(step) {
    var list = items();
    if (!list.length) return;
    var current = list.indexOf(document.activeElement);
    if (current === -1) {
      // Start from the message named in the URL (#m-12) when there is one.
      var target = window.location.hash ? document.getElementById(window.location.hash.slice(1)) : null;
      current = target ? list.indexOf(target) : -1;
    }
    var next = Math.max(0, Math.min(list.length - 1, current + step));
    if (current === -1) next = step > 0 ? 0 : list.length - 1;
    list[next].focus();
    list[next].scrollIntoView({ block: "nearest" });
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (typingInField(event)) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    if (event.key === "?") {
      var help = document.getElementById("keys-help");
      if (help && !help.open && help.showModal) {
        event.preventDefault();
        help.showModal();
      }
    } else if (event.key === "/") {
      var search = document.querySelector("[data-search-input]");
      event.preventDefault();
      if (search) {
        search.focus();
        search.select();
      } else {
        var link = document.querySelector("[data-search-link]");
        if (link) window.location.href = link.getAttribute("href");
      }
    } else if (event.key === "j") {
      move(1);
    } else if (event.key === "k") {
      move(-1);
    } else if (event.key === "Enter" && document.activeElement && document.activeElement.hasAttribute("data-nav-item")) {
      var anchor = document.activeElement.querySelector("a[data-primary]");
      if (anchor) anchor.click();
    }
  });

  // Forms that ask before a destructive action: <form data-confirm="...">.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form && form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) event.preventDefault();
  });

  // Copy buttons (<button data-copy="an id" hidden>): shown only where script runs, since only script can copy.
  function showCopyButtons() {
    document.querySelectorAll("[data-copy][hidden]").forEach(function (button) { button.hidden = false; });
  }
  document.addEventListener("DOMContentLoaded", showCopyButtons);
  document.addEventListener("htmx:afterSettle", showCopyButtons);
  document.addEventListener("click", function (event) {
    var button = event.target && event.target.closest ? event.target.closest("[data-copy]") : null;
    if (!button || !navigator.clipboard) return;
    navigator.clipboard.writeText(button.getAttribute("data-copy")).then(function () {
      button.textContent = "Copied";
      window.setTimeout(function () { button.textContent = "Copy id"; }, 1500);
    });
  });

  // A form refused on a POST comes back as its page at the action's URL (/r/<id>/waits/resolve): put the page's
  // own URL in the address bar, so reload and a shared link show the page and never resend the form.
  var pageUrl = document.querySelector('meta[name="page-url"]');
  if (pageUrl && pageUrl.content && pageUrl.content !== window.location.pathname) {
    window.history.replaceState(null, "", pageUrl.content);
  }

  // Auto-submit fields marked data-autosubmit (the tenant switcher, the audit-event filters) when they change;
  // a button remains for no-JS use. A date field fires "change" at every complete value while someone types its
  // year (2, 20, 202, 2026), and each submit would abort the one before: wait for a pause, one submit per form.
  var pendingSubmit = new WeakMap();
  document.addEventListener("change", function (event) {
    var el = event.target;
    if (!(el && el.hasAttribute && el.hasAttribute("data-autosubmit") && el.form)) return;
    var form = el.form;
    window.clearTimeout(pendingSubmit.get(form));
    pendingSubmit.set(form, window.setTimeout(function () { form.submit(); }, el.type === "date" ? 600 : 0));
  });
})();
