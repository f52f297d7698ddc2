// The "known at" slider: each step is an instant at which belief changed. Moving it fills the
// known_at field and submits the form, which redraws the page as believed then. Without
// script the slider stays hidden and the field, its button and the links do the same.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const slider = document.getElementById("known-slider");
  const field = document.getElementById("known_at");
  if (!slider || !field || !field.form) {
    return;
  }
  const instants = slider.dataset.instants.split(" ");
  const pick = () => instants[Number(slider.value)] || "";
  slider.hidden = false;
  slider.addEventListener("input", () => {
    field.value = pick();
  });
  slider.addEventListener("change", () => {
    field.value = pick();
    field.form.submit();
  });
});
