// The primary sidebar's toggle button, working again (sphinx-book-theme 1.3.0 with
// pydata-sphinx-theme 0.17: executablebooks/sphinx-book-theme issues 935, 986, 988, 999;
// pydata/pydata-sphinx-theme issue 2451; the upstream fix is sphinx-book-theme PR 1000).
// pydata-sphinx-theme 0.17 wires only the first `.primary-toggle` on the page, which was its
// own header's (a 64 px band with a second search button): _templates/layout.html leaves
// that header out, so on a narrow screen the theme's handler now opens the book theme's
// button's sidebar as a modal dialog (Escape or a click outside closes it). On a wide screen
// that handler would pop the sidebar out as a dialog too; there this script collapses and
// restores the sidebar in place instead, as the book theme intends.
(function () {
  "use strict";
  const WIDE = "(min-width: 992px)";

  function setUp() {
    const sidebar = document.getElementById("pst-primary-sidebar");
    const buttons = document.querySelectorAll(".bd-header-article .primary-toggle");
    buttons.forEach(function (button) {
      button.addEventListener(
        "click",
        function (event) {
          if (!sidebar || !window.matchMedia(WIDE).matches) return; // the theme's dialog
          event.preventDefault();
          event.stopImmediatePropagation();
          sidebar.classList.toggle("pst-sidebar-hidden");
        },
        true,
      );
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setUp);
  } else {
    setUp();
  }
})();
