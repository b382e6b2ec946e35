/*
 * s3_web_identity.c - a web identity's token exchanged with STS for a
 * temporary key pair (tb_s3_web_identity.h).
 */
#include "connectors/s3/tb_s3_web_identity.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "connectors/s3/tb_s3_text.h"
#include "core/tb_buf.h"

#define TOKEN_MAX (64 * 1024)  /* a JWT is a few kB */
#define ANSWER_MAX (64 * 1024) /* STS's answer is about 2 kB */
#define SESSION_SECONDS "3600" /* STS's default for a role */

bool tb_s3_web_identity_from_env(const char *region, tb_s3_web_identity_t *out)
{
    const char *token_file = getenv("AWS_WEB_IDENTITY_TOKEN_FILE");
    const char *role_arn = getenv("AWS_ROLE_ARN");
    if (token_file == NULL || token_file[0] == '\0' || role_arn == NULL ||
        role_arn[0] == '\0') {
        return false;
    }
    const char *session = getenv("AWS_ROLE_SESSION_NAME");
    const char *sts = getenv("AWS_ENDPOINT_URL_STS");
    if (sts == NULL || sts[0] == '\0') {
        sts = getenv("AWS_ENDPOINT_URL");
    }
    *out = (tb_s3_web_identity_t){
        .token_file = token_file,
        .role_arn = role_arn,
        .session_name = session != NULL && session[0] != '\0' ? session : "tributary",
    };
    if (sts != NULL && sts[0] != '\0') {
        snprintf(out->sts_url, sizeof(out->sts_url), "%s", sts);
    } else {
        snprintf(out->sts_url, sizeof(out->sts_url), "https://sts.%s.amazonaws.com",
                 region);
    }
    return true;
}

void tb_s3_credentials_clear(tb_s3_credentials_t *credentials)
{
    char *secrets[] = {credentials->access_key, credentials->secret_key,
                       credentials->session_token};
    for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++) {
        if (secrets[i] != NULL) {
            explicit_bzero(secrets[i], strlen(secrets[i]));
            free(secrets[i]);
        }
    }
    *credentials = (tb_s3_credentials_t){0};
}

/* The token file's content, trailing whitespace cut; NULL with errstr. */
static char *token_read(const tb_s3_web_identity_t *identity, char *errstr,
                        size_t errstr_size)
{
    FILE *f = fopen(identity->token_file, "r");
    char *token = malloc(TOKEN_MAX + 1);
    size_t n = f != NULL && token != NULL ? fread(token, 1, TOKEN_MAX + 1, f) : 0;
    if (f != NULL) {
        fclose(f);
    }
    while (n > 0 && strchr(" \t\r\n", token[n - 1]) != NULL) {
        n--;
    }
    if (f == NULL || token == NULL || n == 0 || n > TOKEN_MAX) {
        snprintf(errstr, errstr_size,
                 "the web identity token file %s (AWS_WEB_IDENTITY_TOKEN_FILE) %s",
                 identity->token_file,
                 f == NULL ? "cannot be read"
                 : n == 0  ? "is empty"
                           : "is too large");
        free(token);
        return NULL;
    }
    token[n] = '\0';
    return token;
}

static size_t on_answer(char *data, size_t size, size_t nitems, void *arg)
{
    tb_buf_t *answer = arg;
    size_t len = size * nitems;
    if (answer->len + len <= ANSWER_MAX) {
        tb_buf_append(answer, data, len);
    }
    return len;
}

/* The form body of the request: the token percent-encoded. */
static void form_of(const tb_s3_web_identity_t *identity, const char *token,
                    tb_buf_t *form)
{
    tb_buf_puts(form, "Action=AssumeRoleWithWebIdentity&DurationSeconds=" SESSION_SECONDS
                      "&RoleArn=");
    tb_s3_uri_encode(form, identity->role_arn, false);
    tb_buf_puts(form, "&RoleSessionName=");
    tb_s3_uri_encode(form, identity->session_name, false);
    tb_buf_puts(form, "&Version=2011-06-15&WebIdentityToken=");
    tb_s3_uri_encode(form, token, false);
}

/* "2026-12-07T14:17:32Z" or with fractions of a second, in ms; -1 else. */
static int64_t expiration_ms(const char *text)
{
    struct tm tm = {0};
    const char *rest = strptime(text, "%Y-%m-%dT%H:%M:%S", &tm);
    return rest != NULL ? (int64_t)timegm(&tm) * 1000 : -1;
}

/* Fills out from STS's answer; -1 when an element is missing. */
static int credentials_of(const tb_buf_t *answer, tb_s3_credentials_t *out)
{
    char access[256], secret[256], expiration[64];
    char *token = malloc(ANSWER_MAX);
    int rc = -1;
    if (token != NULL &&
        tb_s3_xml_text(answer->data, answer->len, "AccessKeyId", access,
                       sizeof(access)) &&
        tb_s3_xml_text(answer->data, answer->len, "SecretAccessKey", secret,
                       sizeof(secret)) &&
        tb_s3_xml_text(answer->data, answer->len, "SessionToken", token, ANSWER_MAX) &&
        tb_s3_xml_text(answer->data, answer->len, "Expiration", expiration,
                       sizeof(expiration)) &&
        (out->expires_ms = expiration_ms(expiration)) > 0) {
        out->access_key = strdup(access);
        out->secret_key = strdup(secret);
        out->session_token = strdup(token);
        rc = out->access_key != NULL && out->secret_key != NULL &&
                     out->session_token != NULL
                 ? 0
                 : -1;
    }
    explicit_bzero(secret, sizeof(secret));
    if (token != NULL) {
        explicit_bzero(token, ANSWER_MAX);
        free(token);
    }
    if (rc != 0) {
        tb_s3_credentials_clear(out);
    }
    return rc;
}

int tb_s3_web_identity_assume(const tb_s3_web_identity_t *identity, long timeout_ms,
                              tb_s3_credentials_t *out, bool *transient, char *errstr,
                              size_t errstr_size)
{
    char prefix[768], error[CURL_ERROR_SIZE] = "";
    snprintf(prefix, sizeof(prefix), "STS AssumeRoleWithWebIdentity of role %s at %s",
             identity->role_arn, identity->sts_url);
    *out = (tb_s3_credentials_t){0};
    *transient = false;
    tb_buf_t form = {0}, answer = {0};
    char *token = token_read(identity, errstr, errstr_size);
    CURL *c = token != NULL ? curl_easy_init() : NULL;
    int rc = -1;
    if (c == NULL) {
        if (token != NULL) {
            snprintf(errstr, errstr_size, "%s: out of memory", prefix);
        }
        goto done;
    }
    form_of(identity, token, &form);
    curl_easy_setopt(c, CURLOPT_URL, identity->sts_url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, form.data);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)form.len);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                     timeout_ms < 10000 ? timeout_ms : 10000);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_answer);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &answer);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "tributary-s3-sink");
    CURLcode code = curl_easy_perform(c);
    long status = 0;
    if (code != CURLE_OK) {
        snprintf(errstr, errstr_size, "%s failed: %s", prefix,
                 error[0] != '\0' ? error : curl_easy_strerror(code));
        *transient = true;
        goto done;
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) {
        char sts_code[64], message[200];
        tb_s3_xml_text(answer.data, answer.len, "Code", sts_code, sizeof(sts_code));
        tb_s3_xml_text(answer.data, answer.len, "Message", message, sizeof(message));
        snprintf(errstr, errstr_size, "%s failed: HTTP %ld%s%s%s%s", prefix, status,
                 sts_code[0] ? " " : "", sts_code, message[0] ? ": " : "", message);
        *transient = status == 429 || status >= 500 ||
                     strcmp(sts_code, "IDPCommunicationError") == 0;
        goto done;
    }
    if (credentials_of(&answer, out) != 0) {
        snprintf(errstr, errstr_size, "%s: the answer holds no whole key pair", prefix);
        goto done;
    }
    rc = 0;

done:
    curl_easy_cleanup(c);
    if (token != NULL) {
        explicit_bzero(token, strlen(token));
        free(token);
    }
    /* the form holds the token, the answer the key pair */
    if (form.data != NULL) {
        explicit_bzero(form.data, form.len);
    }
    if (answer.data != NULL) {
        explicit_bzero(answer.data, answer.len);
    }
    free(form.data);
    free(answer.data);
    return rc;
}
