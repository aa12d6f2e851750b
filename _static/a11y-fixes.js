// Accessibility fixes for markup that the theme and the extensions write.
document.addEventListener("DOMContentLoaded", () => {
  // docutils writes the bibliography as <div role="list" class="citation-list"> whose children
  // are not list items, which assistive technology reads as a broken list (axe-core:
  // aria-required-children). The citations are a plain sequence, so the role goes.
  document
    .querySelectorAll('.citation-list[role="list"]')
    .forEach((element) => element.removeAttribute("role"));

  // A control's accessible name must contain its visible text, so that a voice-control user
  // can say what they see (WCAG 2.5.3, axe-core: label-content-name-mismatch).
  // - myst-nb's folded cells: <summary aria-label="Toggle hidden content"> shows "Show code
  //   cell source" (or "Hide ..."): without the label, the name is the visible line.
  // - the sidebar's search field shows "Search Ctrl+K" under the label "Search": without the
  //   label, the name is what it shows.
  document
    .querySelectorAll('summary[aria-label="Toggle hidden content"], .search-button-field[aria-label]')
    .forEach((element) => element.removeAttribute("aria-label"));
  // - the colour-mode button's icons carry titles ("Light", "Dark", "System Settings") that
  //   count as visible text; the button's name is "Color mode". The icons are decoration: the
  //   button's label and tooltip say what it does.
  //   The theme's own scripts may set those titles after this handler has run (a test run
  //   once caught the titles back on one page), so an observer removes any that come back.
  const hideColourModeIcons = () =>
    document.querySelectorAll(".theme-switch-button i.theme-switch").forEach((icon) => {
      if (icon.getAttribute("aria-hidden") !== "true") icon.setAttribute("aria-hidden", "true");
      if (icon.hasAttribute("title")) icon.removeAttribute("title");
    });
  hideColourModeIcons();
  const watchIcons = new MutationObserver(hideColourModeIcons);
  document.querySelectorAll(".theme-switch-button").forEach((button) =>
    watchIcons.observe(button, {
      subtree: true,
      childList: true,
      attributes: true,
      attributeFilter: ["title", "aria-hidden"],
    }),
  );
});
