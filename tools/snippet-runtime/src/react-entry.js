// Entry for static/vendor/react/react.js: React ships CommonJS only, so we
// bundle the modules a snippet may import and expose them as window.OsfReact.
// The frame's module loader maps `react`, `react-dom`, `react-dom/client` and
// `react/jsx-runtime` onto these objects.
window.OsfReact = Object.freeze({
  react: require("react"),
  reactDom: require("react-dom"),
  reactDomClient: require("react-dom/client"),
  jsxRuntime: require("react/jsx-runtime"),
});
