// docutils writes the bibliography as <div role="list" class="citation-list"> whose children
// are not list items, which assistive technology reads as a broken list (axe-core:
// aria-required-children). The citations are a plain sequence, so the role goes.
document.addEventListener("DOMContentLoaded", () => {
  document
    .querySelectorAll('.citation-list[role="list"]')
    .forEach((element) => element.removeAttribute("role"));
});
