export { authenticateMail, type MailAuthOptions, type MailAuthResult } from "./authenticate.js";
export {
  type ComposeMailInput,
  composeAgreementMail,
  JWS_PART_TYPE,
  MACHINE_PART_TYPE,
  RECORD_PART_TYPE,
} from "./compose.js";
export { type DkimKey, DkimSignError, dkimSignMail, dkimTxtRecord } from "./dkim.js";
export { AGENT_ATTRIBUTION_HEADER, AGENT_OF_HEADER, DKIM_SIGNED_HEADERS } from "./headers.js";
export { type ParsedAgreementMail, parseAgreementMail } from "./parse.js";
export { type ReceivedMail, type ReceiveMailOptions, receiveAgreementMail } from "./receive.js";
export { formatMoney, renderHtml, renderText } from "./render.js";
