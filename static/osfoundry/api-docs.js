// Starts Swagger UI on /api/v1/docs (templates/osfoundry/api_docs.html). A file of its own, not
// an inline script: the console's Content-Security-Policy runs none.
(function () {
  "use strict";
  var settings = JSON.parse(document.getElementById("swagger-settings").textContent);
  settings.dom_id = "#swagger-ui";
  settings.presets = [window.SwaggerUIBundle.presets.apis];
  window.SwaggerUIBundle(settings);
})();
