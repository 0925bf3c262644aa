// A local rendering of the OpenAPI schema: this page loads nothing from another host.
"use strict";
fetch("openapi.json").then((r) => r.json()).then((spec) => {
  const root = document.getElementById("routes");
  root.replaceChildren();
  for (const [path, ops] of Object.entries(spec.paths || {})) {
    for (const [method, op] of Object.entries(ops)) {
      const sec = document.createElement("section");
      const h = document.createElement("h3");
      h.textContent = method.toUpperCase() + " " + path;
      sec.appendChild(h);
      const body = op.requestBody && op.requestBody.content && op.requestBody.content["application/json"];
      if (body) {
        const ref = (body.schema.$ref || "").split("/").pop();
        const schema = (spec.components.schemas || {})[ref] || body.schema;
        const pre = document.createElement("pre");
        pre.textContent = JSON.stringify(schema, null, 2);
        sec.appendChild(pre);
      }
      root.appendChild(sec);
    }
  }
});
