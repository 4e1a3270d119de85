/**
 * Host names of cloud instance metadata services. Their addresses (169.254.169.254, fd00:ec2::254,
 * 100.100.100.200) are refused at the address stage already; the names are refused at the URL
 * stage too, so the refusal does not depend on what a resolver answers (a split-horizon or
 * test resolver, or a development policy that lets single labels through). A small, well-known
 * list:
 * - `metadata.google.internal`, and `metadata` as Compute Engine's search list completes it;
 * - `instance-data` and `instance-data.ec2.internal`: EC2's names for its metadata service;
 * - `metadata.tencentyun.com`: Tencent Cloud's metadata service.
 */
const METADATA_HOSTS: ReadonlySet<string> = new Set([
  "metadata.google.internal",
  "metadata",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.tencentyun.com",
]);

/** Whether a normalised host name (lower case, no trailing dot) names a metadata service. */
export const isMetadataHost = (host: string): boolean => METADATA_HOSTS.has(host);
