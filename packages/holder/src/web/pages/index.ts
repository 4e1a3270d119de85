export { CONTENT_SECURITY_POLICY } from "./layout.js";
export { mountPages, type PagesDeps } from "./mount.js";
export { MAX_FORM_BYTES, PAGE_HEADERS } from "./security.js";
