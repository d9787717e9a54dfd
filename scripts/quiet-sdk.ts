/**
 * Imported first by the local commands and the bench: on Node 20 the AWS SDK prints, at its first
 * client, an 8-line notice that its releases after January 2027 need Node 22. That is true, and
 * about deploys, which run nodejs22.x; locally it would only bury what the command says. The
 * processes these commands start inherit the setting. (Set the variable to `false` to see it.)
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export {};
