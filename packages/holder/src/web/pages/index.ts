export { CONTENT_SECURITY_POLICY } from "../../html/layout.js";
export { MAX_FORM_BYTES, PAGE_HEADERS } from "../../html/security.js";
export { mountPages, type PagesDeps } from "./mount.js";
