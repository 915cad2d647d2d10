// BesluitBron's search page works without this script. It only fills in a platform
// that was still searching when the page was sent: it fetches that platform's group
// (HTML made and escaped by the server) and puts it in place.
"use strict";
(function () {
  function fill(section) {
    var src = section.getAttribute("data-group");
    if (!src || src.charAt(0) !== "/") return;
    fetch(src, { headers: { "Accept": "text/html" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.querySelector("section.platform");
        if (fresh) section.replaceWith(document.importNode(fresh, true));
      })
      .catch(function () { /* the link in the section still works */ });
  }
  document.addEventListener("DOMContentLoaded", function () {
    var pending = document.querySelectorAll("section.platform[aria-busy=true]");
    for (var i = 0; i < pending.length; i++) fill(pending[i]);
  });
})();
