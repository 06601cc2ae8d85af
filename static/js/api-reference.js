// The API reference page: Swagger UI (vendored by drf-spectacular-sidecar) over the server's own OpenAPI document.
// No validator badge (it would call validator.swagger.io): nothing on this page leaves the server.
(function () {
  var root = document.getElementById("api-reference");
  window.SwaggerUIBundle({
    url: root.dataset.openapiUrl,
    domNode: root,
    validatorUrl: null,
    deepLinking: true,
    tryItOutEnabled: false,
  });
})();
