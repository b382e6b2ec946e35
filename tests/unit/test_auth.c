/* REST API security: password hashes, the credentials file, Authorization
 * headers, and the start-up refusal of unauthenticated remote listeners.
 *
 * Code review, not testable from outside: every hash comparison in
 * server/auth.c goes through CRYPTO_memcmp (hash_matches and verified_find,
 * which compares every slot), and an unknown name costs one PBKDF2 like a
 * known one. */
#include "tb_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <openssl/evp.h>

#include "core/tb_metrics.h"

#include "server/tb_auth.h"
#include "server/tb_http.h"

#define FAST 1000u /* the fewest iterations a file may use: quick tests */

/* Writes text to a new temporary file; returns its path (free it). */
static char *temp_file(const char *text)
{
    char *path = strdup("/tmp/tb_test_auth_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

/* A client address of its own for each call: checks that are not about
 * the backoff never reach it. */
static const struct sockaddr *fresh_client(void)
{
    static struct sockaddr_in address = {.sin_family = AF_INET};
    static uint32_t next = 0x0a000001; /* 10.0.0.1 */
    address.sin_addr.s_addr = htonl(next++);
    return (const struct sockaddr *)&address;
}

/* "<name>:<hash of secret>\n" */
static void entry(char *out, size_t size, const char *name, const char *secret)
{
    char hash[TB_AUTH_HASH_MAX];
    assert_int_equal(tb_auth_hash(secret, strlen(secret), FAST, hash, sizeof(hash)), 0);
    snprintf(out, size, "%s:%s\n", name, hash);
}

/* "Basic base64(credentials)"; len counts bytes, so NULs can be encoded. */
static void basic_header(char *out, const char *credentials, size_t len)
{
    strcpy(out, "Basic ");
    EVP_EncodeBlock((unsigned char *)out + 6, (const unsigned char *)credentials,
                    (int)len);
}

static void test_hash_round_trip(void **state)
{
    (void)state;
    char a[TB_AUTH_HASH_MAX], b[TB_AUTH_HASH_MAX];
    assert_int_equal(tb_auth_hash("s3cret", 6, FAST, a, sizeof(a)), 0);
    assert_int_equal(tb_auth_hash("s3cret", 6, FAST, b, sizeof(b)), 0);
    assert_true(strncmp(a, "pbkdf2-sha256$1000$", 19) == 0);
    assert_string_not_equal(a, b); /* a salt of its own */
    assert_int_equal(tb_auth_hash_verify("s3cret", 6, a), 1);
    assert_int_equal(tb_auth_hash_verify("s3cret", 6, b), 1);
    /* a secret with a NUL and bytes above 127 */
    assert_int_equal(tb_auth_hash("p\0\xc3\xa9", 4, FAST, a, sizeof(a)), 0);
    assert_int_equal(tb_auth_hash_verify("p\0\xc3\xa9", 4, a), 1);
    assert_int_equal(tb_auth_hash_verify("p", 1, a), 0);
}

static void test_wrong_password_refused(void **state)
{
    (void)state;
    char hash[TB_AUTH_HASH_MAX];
    assert_int_equal(tb_auth_hash("s3cret", 6, FAST, hash, sizeof(hash)), 0);
    assert_int_equal(tb_auth_hash_verify("s3creT", 6, hash), 0);
    assert_int_equal(tb_auth_hash_verify("s3cre", 5, hash), 0);
    assert_int_equal(tb_auth_hash_verify("", 0, hash), 0);
}

static void test_hash_bounds_and_malformed_hashes(void **state)
{
    (void)state;
    char hash[TB_AUTH_HASH_MAX];
    assert_int_equal(tb_auth_hash("x", 1, TB_AUTH_MIN_ITERATIONS - 1, hash, sizeof(hash)),
                     -1);
    assert_int_equal(tb_auth_hash("x", 1, TB_AUTH_MAX_ITERATIONS + 1, hash, sizeof(hash)),
                     -1);
    assert_int_equal(tb_auth_hash("x", 1, FAST, hash, 20), -1);
    const char *salt = "AAAAAAAAAAAAAAAAAAAAAA==";
    const char *digest = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
    char text[256];
    snprintf(text, sizeof(text), "pbkdf2-sha256$1000$%s$%s", salt, digest);
    assert_int_equal(tb_auth_hash_verify("x", 1, text), 0); /* well-formed */
    const char *bad[] = {
        "",
        "x",
        "pbkdf2-sha1$1000$AAAAAAAAAAAAAAAAAAAAAA==$AAAA",
        "pbkdf2-sha256$999$AAAAAAAAAAAAAAAAAAAAAA==$"
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "pbkdf2-sha256$01000$AAAAAAAAAAAAAAAAAAAAAA==$"
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "pbkdf2-sha256$99999999999$AAAAAAAAAAAAAAAAAAAAAA==$"
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "pbkdf2-sha256$1000$$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "pbkdf2-sha256$1000$AAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "pbkdf2-sha256$1000$AAAAAAAAAAAAAAAAAAAAAA==$AAAA",
        "pbkdf2-sha256$1000$AAAAAAAAAAAAAAAAAAAAAA==$"
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",
        "pbkdf2-sha256$1000$AAAAAAAAAAAAAAAAAAAAAA==$"
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA*=",
        "pbkdf2-sha256$1000$AAAAAAAAAAA=AAAAAAAAAA==$"
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "pbkdf2-sha256$1000$AAAAAAAAAAAAAAAAAAAAAA==$"
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= ",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(tb_auth_hash_verify("x", 1, bad[i]), -1);
    }
}

static void test_mode_parse(void **state)
{
    (void)state;
    tb_auth_mode_t mode;
    assert_int_equal(tb_auth_mode_parse("BASIC", &mode), 0);
    assert_int_equal(mode, TB_AUTH_BASIC);
    assert_int_equal(tb_auth_mode_parse("bearer", &mode), 0);
    assert_int_equal(mode, TB_AUTH_BEARER);
    assert_int_equal(tb_auth_mode_parse("none", &mode), 0);
    assert_int_equal(mode, TB_AUTH_NONE);
    assert_int_equal(tb_auth_mode_parse("digest", &mode), -1);
    assert_int_equal(tb_auth_mode_parse(NULL, &mode), -1);
}

static void test_basic_header_parsing(void **state)
{
    (void)state;
    char header[256], user[32], password[32];

    basic_header(header, "alice:pa:ss word", 16);
    assert_int_equal(
        tb_auth_basic_parse(header, user, sizeof(user), password, sizeof(password)), 0);
    assert_string_equal(user, "alice");
    assert_string_equal(password, "pa:ss word"); /* split at the first ':' */

    /* scheme in any case, several spaces or tabs, trailing spaces */
    char loose[300];
    snprintf(loose, sizeof(loose), "bAsIc \t %s  ", header + 6);
    assert_int_equal(
        tb_auth_basic_parse(loose, user, sizeof(user), password, sizeof(password)), 0);
    assert_string_equal(user, "alice");

    /* an empty password is a password */
    basic_header(header, "bob:", 4);
    assert_int_equal(
        tb_auth_basic_parse(header, user, sizeof(user), password, sizeof(password)), 0);
    assert_string_equal(password, "");

    const char *refused[] = {
        "",
        "Basic",
        "Basic ",
        "BasicYWxpY2U6cHc=",   /* no space after the scheme */
        "Bearer YWxpY2U6cHc=", /* another scheme */
        "Basic YWxpY2U6cHc",   /* unpadded */
        "Basic YWxp Y2U6cHc=", /* a space inside */
        "Basic YWxpY2U6cH*=",  /* not base64 */
        "Basic YW=pY2U6cHc=",  /* '=' inside */
        "Basic YWxpY2U=",      /* "alice": no ':' */
        "Basic OnB3",          /* ":pw": empty user */
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        assert_int_equal(tb_auth_basic_parse(refused[i], user, sizeof(user), password,
                                             sizeof(password)),
                         -1);
    }
    basic_header(header, "al\0ce:pw", 8); /* a NUL in the user */
    assert_int_equal(
        tb_auth_basic_parse(header, user, sizeof(user), password, sizeof(password)), -1);
    basic_header(header, "alice:p\nw", 9); /* a control character */
    assert_int_equal(
        tb_auth_basic_parse(header, user, sizeof(user), password, sizeof(password)), -1);
    basic_header(header, "alice:0123456789012345678901234567890123456789", 46);
    assert_int_equal(
        tb_auth_basic_parse(header, user, sizeof(user), password, sizeof(password)), -1);
    /* longer than the header limit */
    size_t huge_len = 6000;
    char *huge = malloc(huge_len + 1);
    memcpy(huge, "Basic ", 6);
    memset(huge + 6, 'A', huge_len - 6);
    huge[huge_len] = '\0';
    assert_int_equal(
        tb_auth_basic_parse(huge, user, sizeof(user), password, sizeof(password)), -1);
    free(huge);
}

static void test_basic_credentials_file(void **state)
{
    (void)state;
    char text[1024], line[256], header[256], err[512];
    entry(line, sizeof(line), "alice", "wonderland");
    snprintf(text, sizeof(text), "# users\n\n  %s", line);
    entry(line, sizeof(line), "bob", "builder");
    strcat(text, line);
    char *path = temp_file(text);

    tb_auth_t *auth = tb_auth_create(TB_AUTH_BASIC, path, err, sizeof(err));
    assert_non_null(auth);
    assert_string_equal(tb_auth_challenge(auth), "Basic realm=\"tributary\"");
    basic_header(header, "alice:wonderland", 16);
    assert_int_equal(tb_auth_check(auth, header, fresh_client(), NULL), TB_AUTH_OK);
    basic_header(header, "bob:builder", 11);
    assert_int_equal(tb_auth_check(auth, header, fresh_client(), NULL), TB_AUTH_OK);
    basic_header(header, "bob:wonderland", 14);
    assert_int_equal(tb_auth_check(auth, header, fresh_client(), NULL), TB_AUTH_INVALID);
    basic_header(header, "carol:builder", 13);
    assert_int_equal(tb_auth_check(auth, header, fresh_client(), NULL), TB_AUTH_INVALID);
    assert_int_equal(tb_auth_check(auth, "Basic !!!!", fresh_client(), NULL),
                     TB_AUTH_INVALID);
    assert_int_equal(tb_auth_check(auth, NULL, fresh_client(), NULL), TB_AUTH_MISSING);
    assert_int_equal(tb_auth_check(auth, "Bearer x.y", fresh_client(), NULL),
                     TB_AUTH_MISSING);

    tb_auth_destroy(auth);
    unlink(path);
    free(path);
}

static void test_bearer_tokens(void **state)
{
    (void)state;
    char line[256], err[512];
    entry(line, sizeof(line), "ci-bot", "Zm9vYmFy+/=");
    char *path = temp_file(line);

    tb_auth_t *auth = tb_auth_create(TB_AUTH_BEARER, path, err, sizeof(err));
    assert_non_null(auth);
    assert_string_equal(tb_auth_challenge(auth), "Bearer realm=\"tributary\"");
    assert_int_equal(
        tb_auth_check(auth, "Bearer ci-bot.Zm9vYmFy+/=", fresh_client(), NULL),
        TB_AUTH_OK);
    assert_int_equal(
        tb_auth_check(auth, "bearer   ci-bot.Zm9vYmFy+/= ", fresh_client(), NULL),
        TB_AUTH_OK);
    assert_int_equal(tb_auth_check(auth, "Bearer ci-bot.Zm9vYmFy", fresh_client(), NULL),
                     TB_AUTH_INVALID);
    assert_int_equal(
        tb_auth_check(auth, "Bearer other.Zm9vYmFy+/=", fresh_client(), NULL),
        TB_AUTH_INVALID);
    assert_int_equal(tb_auth_check(auth, "Bearer Zm9vYmFy+/=", fresh_client(), NULL),
                     TB_AUTH_INVALID);
    assert_int_equal(tb_auth_check(auth, "Bearer ci-bot.", fresh_client(), NULL),
                     TB_AUTH_INVALID);
    assert_int_equal(tb_auth_check(auth, "Bearer .Zm9vYmFy+/=", fresh_client(), NULL),
                     TB_AUTH_INVALID);
    assert_int_equal(
        tb_auth_check(auth, "Bearer ci-bot.Zm9v YmFy+/=", fresh_client(), NULL),
        TB_AUTH_INVALID);
    assert_int_equal(
        tb_auth_check(auth, "Basic Y2ktYm90OlptOXZZbUZ5Ky89", fresh_client(), NULL),
        TB_AUTH_MISSING);
    tb_auth_destroy(auth);
    unlink(path);
    free(path);
}

/* The PBKDF2 verifications run so far (tributary_rest_auth_hashes_total). */
static long hashes_run(void)
{
    char *page = tb_metrics_render_series();
    const char *line = strstr(page, "\ntributary_rest_auth_hashes_total ");
    long count = line != NULL ? strtol(strchr(line + 1, ' ') + 1, NULL, 10) : -1;
    free(page);
    return count;
}

static struct sockaddr_in ipv4(const char *address)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    assert_int_equal(inet_pton(AF_INET, address, &a.sin_addr), 1);
    return a;
}

static void test_verified_headers_skip_pbkdf2_and_failing_clients_back_off(void **state)
{
    (void)state;
    char line[256], good[256], wrong[256], err[512];
    entry(line, sizeof(line), "alice", "wonderland");
    char *path = temp_file(line);
    tb_auth_t *auth = tb_auth_create(TB_AUTH_BASIC, path, err, sizeof(err));
    struct sockaddr_in a = ipv4("10.1.1.1"), b = ipv4("10.2.2.2");
    const struct sockaddr *from_a = (const struct sockaddr *)&a;
    const struct sockaddr *from_b = (const struct sockaddr *)&b;
    int64_t wait_ms = 0;
    basic_header(good, "alice:wonderland", 16);
    basic_header(wrong, "alice:wrong", 11);

    assert_int_equal(tb_auth_check(auth, good, from_a, NULL), TB_AUTH_OK);
    assert_int_equal(tb_auth_check(auth, good, from_b, NULL), TB_AUTH_OK);
    assert_int_equal(hashes_run(), 1); /* verified once, from any client */
    for (unsigned i = 0; i < TB_AUTH_FREE_FAILURES; i++) {
        assert_int_equal(tb_auth_check(auth, wrong, from_a, NULL), TB_AUTH_INVALID);
    }
    assert_int_equal(hashes_run(), 1 + TB_AUTH_FREE_FAILURES);
    for (int i = 0; i < 100; i++) {
        assert_int_equal(tb_auth_check(auth, wrong, from_a, &wait_ms), TB_AUTH_THROTTLED);
    }
    assert_true(wait_ms > 0 && wait_ms <= TB_AUTH_BACKOFF_INITIAL_MS);
    assert_int_equal(hashes_run(), 1 + TB_AUTH_FREE_FAILURES); /* no PBKDF2 */
    /* a header verified before still passes; a new one waits, but only on
     * the client that failed */
    assert_int_equal(tb_auth_check(auth, good, from_a, NULL), TB_AUTH_OK);
    char other_form[300];
    snprintf(other_form, sizeof(other_form), "basic %s", good + strlen("Basic "));
    assert_int_equal(tb_auth_check(auth, other_form, from_a, NULL), TB_AUTH_THROTTLED);
    assert_int_equal(tb_auth_check(auth, other_form, from_b, NULL), TB_AUTH_OK);
    assert_int_equal(tb_auth_check(auth, wrong, from_b, NULL), TB_AUTH_INVALID);
    assert_int_equal(hashes_run(), 3 + TB_AUTH_FREE_FAILURES);

    tb_auth_destroy(auth);
    unlink(path);
    free(path);
}

/* tb_auth_create must refuse text, naming the line. */
static void assert_file_refused(tb_auth_mode_t mode, const char *text,
                                const char *expected)
{
    char err[512] = "";
    char *path = temp_file(text);
    tb_auth_t *auth = tb_auth_create(mode, path, err, sizeof(err));
    assert_null(auth);
    if (strstr(err, expected) == NULL || strstr(err, path) == NULL) {
        fail_msg("expected \"%s\" in \"%s\"", expected, err);
    }
    assert_null(strstr(err, "plaintext")); /* a refused line is never echoed */
    unlink(path);
    free(path);
}

static void test_malformed_files_name_the_line(void **state)
{
    (void)state;
    char good[256], text[1024];
    entry(good, sizeof(good), "alice", "wonderland");

    snprintf(text, sizeof(text), "# comment\n%sbob plaintext\n", good);
    assert_file_refused(TB_AUTH_BASIC, text, "line 3: expected <name>:pbkdf2-sha256");
    snprintf(text, sizeof(text), "%sbob:plaintext\n", good);
    assert_file_refused(TB_AUTH_BASIC, text, "line 2: the hash is not");
    snprintf(text, sizeof(text), "\n%s%s", good, good);
    assert_file_refused(TB_AUTH_BASIC, text, "line 3: alice is listed twice");
    snprintf(text, sizeof(text), ":%s", strchr(good, ':') + 1);
    assert_file_refused(TB_AUTH_BASIC, text, "line 1: the name is empty");
    snprintf(text, sizeof(text), "al ice%s", strchr(good, ':'));
    assert_file_refused(TB_AUTH_BASIC, text, "line 1: the name");
    snprintf(text, sizeof(text), "ci.bot%s", strchr(good, ':'));
    assert_file_refused(TB_AUTH_BEARER, text, "line 1: the name");
    assert_file_refused(TB_AUTH_BASIC, "# nobody\n\n", "no credentials in the file");

    char err[512];
    assert_null(tb_auth_create(TB_AUTH_BASIC, "/nonexistent/creds", err, sizeof(err)));
    assert_non_null(strstr(err, "/nonexistent/creds: No such file"));
}

static void test_loopback_hosts(void **state)
{
    (void)state;
    assert_true(tb_http_host_is_loopback("127.0.0.1"));
    assert_true(tb_http_host_is_loopback("127.1.2.3"));
    assert_true(tb_http_host_is_loopback("::1"));
    assert_true(tb_http_host_is_loopback("::ffff:127.0.0.1"));
    assert_true(tb_http_host_is_loopback("LocalHost"));
    assert_false(tb_http_host_is_loopback(""));
    assert_false(tb_http_host_is_loopback("0.0.0.0"));
    assert_false(tb_http_host_is_loopback("::"));
    assert_false(tb_http_host_is_loopback("10.0.0.1"));
    assert_false(tb_http_host_is_loopback("128.0.0.1"));
    assert_false(tb_http_host_is_loopback("example.com"));
}

static void test_unauthenticated_remote_listeners_refused(void **state)
{
    (void)state;
    char err[512];
    tb_http_options_t options = {.listeners = "http://127.0.0.1:1,http://[::1]:2"};
    assert_int_equal(tb_http_check_exposure(&options, err, sizeof(err)), 0);

    options.admin_listeners = "http://0.0.0.0:3";
    assert_int_equal(tb_http_check_exposure(&options, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "http://0.0.0.0:3"));
    assert_non_null(strstr(err, "rest.auth"));
    assert_non_null(strstr(err, "rest.allow.unauthenticated.remote"));

    options.admin_listeners = "";
    options.listeners = "http://:8083";
    assert_int_equal(tb_http_check_exposure(&options, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "every interface"));
    options.allow_unauthenticated_remote = true;
    assert_int_equal(tb_http_check_exposure(&options, err, sizeof(err)), 0);

    options.allow_unauthenticated_remote = false;
    options.auth = TB_AUTH_BEARER;
    assert_int_equal(tb_http_check_exposure(&options, err, sizeof(err)), 0);

    options.auth = TB_AUTH_NONE;
    options.listeners = "https://0.0.0.0:8443";
    options.ssl_client_auth = TB_HTTP_CLIENT_AUTH_REQUESTED;
    assert_int_equal(tb_http_check_exposure(&options, err, sizeof(err)), -1);
    options.ssl_client_auth = TB_HTTP_CLIENT_AUTH_REQUIRED;
    assert_int_equal(tb_http_check_exposure(&options, err, sizeof(err)), 0);

    tb_http_client_auth_t client_auth;
    assert_int_equal(tb_http_client_auth_parse("Required", &client_auth), 0);
    assert_int_equal(client_auth, TB_HTTP_CLIENT_AUTH_REQUIRED);
    assert_int_equal(tb_http_client_auth_parse("want", &client_auth), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_round_trip),
        cmocka_unit_test(test_wrong_password_refused),
        cmocka_unit_test(test_hash_bounds_and_malformed_hashes),
        cmocka_unit_test(test_mode_parse),
        cmocka_unit_test(test_basic_header_parsing),
        cmocka_unit_test(test_basic_credentials_file),
        cmocka_unit_test(test_bearer_tokens),
        cmocka_unit_test(test_verified_headers_skip_pbkdf2_and_failing_clients_back_off),
        cmocka_unit_test(test_malformed_files_name_the_line),
        cmocka_unit_test(test_loopback_hosts),
        cmocka_unit_test(test_unauthenticated_remote_listeners_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
