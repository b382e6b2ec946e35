#include "connectors/kafka/tb_java_client_keys.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <librdkafka/rdkafka.h>

#include "core/tb_config.h"
#include "core/tb_secret.h"

/* The roles a key belongs to. */
#define P (1u << TB_CLIENT_PRODUCER)
#define C (1u << TB_CLIENT_CONSUMER)
#define A (1u << TB_CLIENT_ADMIN)
#define PCA (P | C | A)

typedef struct translation translation_t;
typedef struct java_key java_key_t;

/* Turns one Java key's value into librdkafka properties (through put()). */
typedef void (*translate_fn)(translation_t *t, const java_key_t *key, const char *value,
                             const char *origin);

struct java_key {
    const char *name;          /* Java's */
    unsigned roles;            /* the clients that define it */
    const char *rdkafka;       /* what it becomes; NULL: nothing */
    translate_fn translate;    /* NULL: rdkafka = value, as written */
    const char *const *one_of; /* Java's values, checked first; NULL: any */
    const char *why_not;       /* why a value Java takes is not in one_of; NULL */
    long long scale;           /* value divided by this, rounded up; 0: as is */
    const char *note;          /* why nothing (rdkafka NULL), or what it does */
};

struct translation {
    tb_client_role_t role;
    const json_t *in;      /* the merged properties, as written */
    const json_t *origins; /* in's key -> the config key written */
    json_t *out;           /* librdkafka's properties */
    json_t *setters;       /* out's key -> [rank, origin] of who set it */
    rd_kafka_conf_t *scratch;
    json_t *errors;
    const char *written; /* the value being translated, as written */
};

static const char *const role_names[] = {"producer", "consumer", "admin"};

/* -------------------------------------------------------------------------
 * Setting a librdkafka property, checked by librdkafka
 */

/* How late origin's layer comes: <role>.override. keys over the worker's
 * <role>. keys over its plain ones. */
static int rank_of(tb_client_role_t role, const char *origin)
{
    size_t n = strlen(role_names[role]);
    if (strncmp(origin, role_names[role], n) != 0 || origin[n] != '.') {
        return 0;
    }
    return strncmp(origin + n, ".override.", 10) == 0 ? 2 : 1;
}

__attribute__((format(printf, 3, 4))) static void
error_add(translation_t *t, const char *origin, const char *fmt, ...)
{
    char message[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    tb_config_error_add(t->errors, origin, message);
}

/* librdkafka's reason for refusing a value, in the user's terms: a range in
 * the user's units (scale), other messages with the property librdkafka
 * names replaced by origin. */
static void rdkafka_reason(const char *reason, const char *origin, long long scale,
                           char *out, size_t out_size)
{
    const char *range = strstr(reason, "outside allowed range ");
    double value;
    long long low, high; /* librdkafka's bounds are whole numbers */
    if (range != NULL &&
        sscanf(reason, "Configuration property \"%*[^\"]\" value %lf", &value) == 1 &&
        sscanf(range, "outside allowed range %lld..%lld", &low, &high) == 2) {
        long long unit = scale > 0 ? scale : 1;
        if (value < (double)low) {
            snprintf(out, out_size, "Value must be at least %lld",
                     scale > 0 ? (low - 1) * unit + 1 : low);
        } else {
            snprintf(out, out_size, "Value must be no more than %lld", high * unit);
        }
        return;
    }
    if (strncmp(reason, "Expected bool value", 19) == 0) {
        snprintf(out, out_size, "Expected value to be either true or false");
        return;
    }
    if (strncmp(reason, "Invalid value for configuration property", 40) == 0) {
        snprintf(out, out_size, "Not a valid value");
        return;
    }
    const char *open = strchr(reason, '"');
    const char *close = open != NULL ? strchr(open + 1, '"') : NULL;
    if (close != NULL) {
        snprintf(out, out_size, "%.*s\"%s\"%s", (int)(open - reason), reason, origin,
                 close + 1);
    } else {
        snprintf(out, out_size, "%s", reason);
    }
}

/* True when origin's value must not be shown: a client secret, or a Java
 * PASSWORD key. */
static bool hidden(const char *origin)
{
    static const char *const java_secrets[] = {"sasl.jaas.config",
                                               "ssl.keystore.key",
                                               "ssl.keystore.certificate.chain",
                                               "ssl.truststore.certificates",
                                               "ssl.truststore.password",
                                               NULL};
    if (tb_client_secret_key(origin)) {
        return true;
    }
    for (size_t i = 0; java_secrets[i] != NULL; i++) {
        size_t n = strlen(origin), m = strlen(java_secrets[i]);
        if (n >= m && strcmp(origin + n - m, java_secrets[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* Sets out[rdkafka] = value for origin: a later layer wins, two keys of one
 * layer must agree, and librdkafka must accept the value (a reference is
 * checked once resolved). scale names the range in the user's units. */
static void put(translation_t *t, const char *rdkafka, const char *value,
                const char *origin, long long scale, bool runtime)
{
    int rank = rank_of(t->role, origin);
    json_t *setter = json_object_get(t->setters, rdkafka);
    const char *current = json_string_value(json_object_get(t->out, rdkafka));
    if (setter != NULL) {
        int their_rank = (int)json_integer_value(json_array_get(setter, 0));
        const char *their_origin = json_string_value(json_array_get(setter, 1));
        if (their_rank > rank) {
            return;
        }
        if (their_rank == rank && strcmp(current, value) != 0) {
            error_add(t, origin,
                      "%s and %s mean the same client setting and differ: set only one",
                      origin, their_origin);
            return;
        }
    }
    char reason[512], shown[600];
    if (!runtime && !tb_secret_is_reference(value) &&
        rd_kafka_conf_set(t->scratch, rdkafka, value, reason, sizeof(reason)) !=
            RD_KAFKA_CONF_OK) {
        rdkafka_reason(reason, origin, scale, shown, sizeof(shown));
        if (hidden(origin)) {
            error_add(t, origin, "Invalid value for configuration %s: %s", origin, shown);
        } else {
            error_add(t, origin, "Invalid value %s for configuration %s: %s", t->written,
                      origin, shown);
        }
        return;
    }
    json_object_set_new(t->out, rdkafka, json_string(value));
    json_object_set_new(t->setters, rdkafka, json_pack("[is]", rank, origin));
}

/* -------------------------------------------------------------------------
 * Value translations
 */

/* "<rdkafka> = value", scaled down to librdkafka's unit when the key has
 * a scale (bytes to kilobytes, rounded up). */
static void translate_renamed(translation_t *t, const java_key_t *key, const char *value,
                              const char *origin)
{
    if (key->scale == 0 || tb_secret_is_reference(value)) {
        put(t, key->rdkafka, value, origin, 0, false);
        return;
    }
    char *end, scaled[32];
    errno = 0;
    long long n = strtoll(value, &end, 10);
    if (*value == '\0' || *end != '\0' || errno != 0 || n < 0) {
        error_add(t, origin,
                  "Invalid value %s for configuration %s: Not a non-negative number of "
                  "type LONG",
                  value, origin);
        return;
    }
    snprintf(scaled, sizeof(scaled), "%lld", n / key->scale + (n % key->scale != 0));
    put(t, key->rdkafka, scaled, origin, key->scale, false);
}

/* Java's -1 (the operating system's default) is librdkafka's 0. */
static void translate_socket_buffer(translation_t *t, const java_key_t *key,
                                    const char *value, const char *origin)
{
    put(t, key->rdkafka, strcmp(value, "-1") == 0 ? "0" : value, origin, 0, false);
}

/* Java's empty algorithm turns host name checks off: librdkafka's none. */
static void translate_endpoint_check(translation_t *t, const java_key_t *key,
                                     const char *value, const char *origin)
{
    put(t, key->rdkafka, value[0] == '\0' ? "none" : value, origin, 0, false);
}

/* Applied by the runtime itself: kept under the Java name, checked as a
 * positive integer when it is a number Java counts. */
static void translate_runtime(translation_t *t, const java_key_t *key, const char *value,
                              const char *origin)
{
    if (strcmp(key->name, TB_JAVA_MAX_POLL_RECORDS) == 0) {
        char *end;
        errno = 0;
        long long n = strtoll(value, &end, 10);
        if (*value == '\0' || *end != '\0' || errno != 0 || n < 1 || n > INT32_MAX) {
            error_add(t, origin,
                      "Invalid value %s for configuration %s: Value must be an integer "
                      "from 1 to 2147483647",
                      value, origin);
            return;
        }
    }
    put(t, key->name, value, origin, 0, true);
}

/* Java names the kinit binary; librdkafka takes the whole command line. */
static void translate_kinit(translation_t *t, const java_key_t *key, const char *value,
                            const char *origin)
{
    char command[1024];
    snprintf(command, sizeof(command),
             "%s -R -t \"%%{sasl.kerberos.keytab}\" -k %%{sasl.kerberos.principal} || "
             "%s -t \"%%{sasl.kerberos.keytab}\" -k %%{sasl.kerberos.principal}",
             value, value);
    put(t, key->rdkafka, command, origin, 0, false);
}

/* Java's partitioners that librdkafka has; any other class is accepted and
 * logged (tb_java_client_key_ignored), librdkafka's default applies. */
static const struct {
    const char *java_class;
    const char *partitioner;
} partitioners[] = {
    {"org.apache.kafka.clients.producer.internals.DefaultPartitioner", "murmur2_random"},
    {"org.apache.kafka.clients.producer.UniformStickyPartitioner", "random"},
};

static const char *partitioner_of(const char *java_class)
{
    for (size_t i = 0; i < sizeof(partitioners) / sizeof(partitioners[0]); i++) {
        if (strcmp(java_class, partitioners[i].java_class) == 0) {
            return partitioners[i].partitioner;
        }
    }
    return NULL;
}

static void translate_partitioner(translation_t *t, const java_key_t *key,
                                  const char *value, const char *origin)
{
    const char *partitioner = partitioner_of(value);
    if (partitioner != NULL) {
        put(t, key->rdkafka, partitioner, origin, 0, false);
    }
}

/* Java's assignor classes (as Java prints them, "class " first, or not) and
 * librdkafka's names, with whether they assign cooperatively. */
static const struct {
    const char *java_class;
    const char *assignor;
    bool cooperative;
} assignors[] = {
    {"org.apache.kafka.clients.consumer.RangeAssignor", "range", false},
    {"org.apache.kafka.clients.consumer.RoundRobinAssignor", "roundrobin", false},
    {"org.apache.kafka.clients.consumer.CooperativeStickyAssignor", "cooperative-sticky",
     true},
};

static int assignor_of(const char *name, size_t len)
{
    if (len > 6 && strncmp(name, "class ", 6) == 0) {
        name += 6;
        len -= 6;
    }
    for (int i = 0; i < (int)(sizeof(assignors) / sizeof(assignors[0])); i++) {
        if ((strlen(assignors[i].java_class) == len &&
             strncmp(name, assignors[i].java_class, len) == 0) ||
            (strlen(assignors[i].assignor) == len &&
             strncmp(name, assignors[i].assignor, len) == 0)) {
            return i;
        }
    }
    return -1;
}

/* partition.assignment.strategy: a list of Java's classes or librdkafka's
 * names, as librdkafka's names. librdkafka cannot mix eager and cooperative
 * assignors in one member; a list that does keeps those of its first kind,
 * the protocol a group whose members all name that list uses in Java (its
 * default: range, then cooperative-sticky). */
static void translate_assignors(translation_t *t, const java_key_t *key,
                                const char *value, const char *origin)
{
    char names[256] = "";
    size_t used = 0;
    int first = -1;
    for (const char *at = value; *at != '\0';) {
        at += strspn(at, ", ");
        size_t len = strcspn(at, ",");
        while (len > 0 && at[len - 1] == ' ') {
            len--;
        }
        if (len == 0) {
            break;
        }
        int i = assignor_of(at, len);
        if (i < 0) {
            error_add(
                t, origin,
                "Invalid value %s for configuration %s: %.*s is not an assignor "
                "librdkafka has: range, roundrobin and cooperative-sticky (or Java's "
                "RangeAssignor, RoundRobinAssignor and CooperativeStickyAssignor; "
                "the eager StickyAssignor has none)",
                value, origin, (int)len, at);
            return;
        }
        first = first < 0 ? i : first;
        if (assignors[i].cooperative == assignors[first].cooperative &&
            used < sizeof(names)) {
            used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s",
                                     used > 0 ? "," : "", assignors[i].assignor);
        }
        at += strcspn(at, ",");
    }
    if (first >= 0) {
        put(t, key->rdkafka, names, origin, 0, false);
    }
}

/* compression.<codec>.level is librdkafka's compression.level when the
 * codec is the one in use; otherwise it has no effect, as in Java. */
static void translate_compression_level(translation_t *t, const java_key_t *key,
                                        const char *value, const char *origin)
{
    const char *codec = json_string_value(json_object_get(t->in, "compression.type"));
    size_t n = codec != NULL ? strlen(codec) : 0;
    if (n > 0 && strncmp(key->name + strlen("compression."), codec, n) == 0 &&
        key->name[strlen("compression.") + n] == '.') {
        put(t, key->rdkafka, value, origin, 0, false);
    }
}

/* Java fetches OAUTHBEARER tokens from the endpoint when one is set;
 * librdkafka does when told sasl.oauthbearer.method=oidc. */
static void translate_token_endpoint(translation_t *t, const java_key_t *key,
                                     const char *value, const char *origin)
{
    put(t, key->rdkafka, value, origin, 0, false);
    put(t, "sasl.oauthbearer.method", "oidc", origin, 0, false);
}

/* A Java key store or trust store file: librdkafka reads PEM files, and
 * PKCS#12 key stores; a JKS file cannot be read, whatever its name. */
static void translate_store(translation_t *t, const java_key_t *key, const char *value,
                            const char *origin)
{
    bool trust = strncmp(key->name, "ssl.truststore.", 15) == 0;
    const char *type_key = trust ? "ssl.truststore.type" : "ssl.keystore.type";
    const char *type = json_string_value(json_object_get(t->in, type_key));
    type = type != NULL ? type : "JKS"; /* Java's default */
    if (strcasecmp(type, "PEM") == 0) {
        put(t, trust ? "ssl.ca.location" : "ssl.certificate.location", value, origin, 0,
            false);
        if (!trust) {
            put(t, "ssl.key.location", value, origin, 0, false);
        }
    } else if (!trust && strcasecmp(type, "PKCS12") == 0) {
        put(t, "ssl.keystore.location", value, origin, 0, false);
    } else {
        error_add(t, origin,
                  "%s is a %s store (%s), which librdkafka cannot read: it reads PEM "
                  "files (set ssl.truststore.type=PEM, or ssl.ca.location) and PKCS12 "
                  "key stores; convert the store with keytool -exportcert -rfc or "
                  "keytool -importkeystore -deststoretype PKCS12",
                  origin, type, type_key);
    }
}

/* -------------------------------------------------------------------------
 * sasl.jaas.config
 */

typedef struct {
    const char *p;
    char module[256];
    json_t *options; /* name -> value */
} jaas_t;

static void jaas_skip(jaas_t *j)
{
    for (;;) {
        while (isspace((unsigned char)*j->p)) {
            j->p++;
        }
        if (strncmp(j->p, "//", 2) == 0) {
            j->p += strcspn(j->p, "\n");
        } else if (strncmp(j->p, "/*", 2) == 0 && strstr(j->p + 2, "*/") != NULL) {
            j->p = strstr(j->p + 2, "*/") + 2;
        } else {
            return;
        }
    }
}

static bool word_char(char c)
{
    return isalnum((unsigned char)c) || (c != '\0' && strchr("._$-", c) != NULL);
}

/* A bare word or a "quoted value" with Java's escapes; NULL when there is
 * none. New string, freed by the caller. */
static char *jaas_token(jaas_t *j)
{
    jaas_skip(j);
    size_t len = strlen(j->p);
    char *out = malloc(len + 1);
    size_t n = 0;
    if (out == NULL) {
        return NULL;
    }
    if (*j->p != '"') {
        while (word_char(*j->p)) {
            out[n++] = *j->p++;
        }
        out[n] = '\0';
        if (n == 0) {
            free(out);
            return NULL;
        }
        return out;
    }
    for (j->p++; *j->p != '"'; j->p++) {
        if (*j->p == '\0') {
            free(out);
            return NULL;
        }
        if (*j->p == '\\' && j->p[1] != '\0') {
            static const char from[] = "ntrbf", to[] = "\n\t\r\b\f";
            const char *esc = strchr(from, *++j->p);
            out[n++] = esc != NULL ? to[esc - from] : *j->p;
        } else {
            out[n++] = *j->p;
        }
    }
    j->p++;
    out[n] = '\0';
    return out;
}

/* Java's "<LoginModule> <flag> name=value ... ;", one login module. */
static bool jaas_parse(jaas_t *j)
{
    static const char *const flags[] = {"required", "requisite", "sufficient", "optional",
                                        NULL};
    char *module = jaas_token(j);
    char *flag = jaas_token(j);
    bool known_flag = false;
    for (size_t i = 0; flag != NULL && flags[i] != NULL; i++) {
        known_flag = known_flag || strcasecmp(flag, flags[i]) == 0;
    }
    bool ok = module != NULL && known_flag && strlen(module) < sizeof(j->module);
    if (ok) {
        snprintf(j->module, sizeof(j->module), "%s", module);
    }
    free(module);
    free(flag);
    while (ok) {
        jaas_skip(j);
        if (*j->p == ';') {
            j->p++;
            jaas_skip(j);
            return *j->p == '\0';
        }
        char *name = jaas_token(j);
        jaas_skip(j);
        char *value = name != NULL && *j->p == '=' ? (j->p++, jaas_token(j)) : NULL;
        ok = value != NULL;
        if (ok) {
            json_object_set_new(j->options, name, json_string(value));
        }
        free(name);
        free(value);
    }
    return false;
}

static const char *jaas_option(const jaas_t *j, const char *name)
{
    return json_string_value(json_object_get(j->options, name));
}

static bool module_is(const jaas_t *j, const char *class_name)
{
    size_t n = strlen(j->module), m = strlen(class_name);
    return n >= m && strcmp(j->module + n - m, class_name) == 0 &&
           (n == m || j->module[n - m - 1] == '.');
}

/* Unsecured OAUTHBEARER's options as librdkafka's sasl.oauthbearer.config
 * ("principal=... scope=... lifeSeconds=... extension_x=..."). Returns
 * false when there is no principal, or a value librdkafka cannot hold. */
static bool unsecured_oauthbearer(const jaas_t *j, char *config, size_t size)
{
    const char *claim = jaas_option(j, "unsecuredLoginPrincipalClaimName");
    char principal_key[300];
    snprintf(principal_key, sizeof(principal_key), "unsecuredLoginStringClaim_%s",
             claim != NULL ? claim : "sub");
    const char *principal = jaas_option(j, principal_key);
    if (principal == NULL) {
        return false;
    }
    size_t used = (size_t)snprintf(config, size, "principal=%s", principal);
    if (claim != NULL) {
        used += (size_t)snprintf(config + used, used < size ? size - used : 0,
                                 " principalClaimName=%s", claim);
    }
    const char *name;
    json_t *value;
    json_object_foreach ((json_t *)j->options, name, value) {
        const char *v = json_string_value(value);
        const char *scope = jaas_option(j, "unsecuredLoginScopeClaimName");
        char list_key[300];
        snprintf(list_key, sizeof(list_key), "unsecuredLoginListClaim_%s",
                 scope != NULL ? scope : "scope");
        if (strchr(v, ' ') != NULL) {
            return false;
        }
        if (strcmp(name, list_key) == 0 && v[0] != '\0') {
            /* Java's list: its first character separates the items */
            used +=
                (size_t)snprintf(config + used, used < size ? size - used : 0, " scope=");
            for (const char *c = v + 1; *c != '\0' && used + 1 < size; c++) {
                config[used++] = *c == v[0] ? ',' : *c;
            }
            config[used < size ? used : size - 1] = '\0';
        } else if (strcmp(name, "unsecuredLoginScopeClaimName") == 0) {
            used += (size_t)snprintf(config + used, used < size ? size - used : 0,
                                     " scopeClaimName=%s", v);
        } else if (strcmp(name, "unsecuredLoginLifetimeSeconds") == 0) {
            used += (size_t)snprintf(config + used, used < size ? size - used : 0,
                                     " lifeSeconds=%s", v);
        } else if (strncmp(name, "unsecuredLoginExtension_", 24) == 0) {
            used += (size_t)snprintf(config + used, used < size ? size - used : 0,
                                     " extension_%s=%s", name + 24, v);
        }
    }
    return used < size;
}

/* OAUTHBEARER tokens from sasl.oauthbearer.token.endpoint.url: the login
 * module's client credentials options become librdkafka's OIDC keys. */
static void oidc_oauthbearer(translation_t *t, const jaas_t *j, const char *origin)
{
    static const char *const options[][2] = {
        {"clientId", "sasl.oauthbearer.client.id"},
        {"clientSecret", "sasl.oauthbearer.client.secret"},
        {"scope", "sasl.oauthbearer.scope"},
    };
    for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
        const char *value = jaas_option(j, options[i][0]);
        if (value != NULL) {
            put(t, options[i][1], value, origin, 0, false);
        }
    }
}

/* PLAIN and SCRAM become sasl.username and sasl.password, unsecured
 * OAUTHBEARER sasl.oauthbearer.config, OAUTHBEARER with a token endpoint
 * librdkafka's OIDC keys; anything else is refused with the keys to use.
 * The value is a secret: it is never shown. */
static void translate_jaas(translation_t *t, const java_key_t *key, const char *value,
                           const char *origin)
{
    (void)key;
    if (tb_secret_is_reference(value)) {
        return; /* read when the task starts and the reference is resolved */
    }
    jaas_t j = {.p = value, .options = json_object()};
    char oauth[2048];
    if (!jaas_parse(&j)) {
        error_add(t, origin,
                  "%s cannot be read: Java's syntax is <LoginModule class> required "
                  "name=\"value\" ... ; (one login module, values in double quotes)",
                  origin);
    } else if (module_is(&j, "PlainLoginModule") || module_is(&j, "ScramLoginModule")) {
        if (jaas_option(&j, "username") == NULL || jaas_option(&j, "password") == NULL) {
            error_add(t, origin, "%s: %s needs username and password options", origin,
                      j.module);
        } else {
            put(t, "sasl.username", jaas_option(&j, "username"), origin, 0, false);
            put(t, "sasl.password", jaas_option(&j, "password"), origin, 0, false);
        }
    } else if (module_is(&j, "OAuthBearerLoginModule")) {
        if (json_object_get(t->in, "sasl.oauthbearer.token.endpoint.url") != NULL) {
            oidc_oauthbearer(t, &j, origin);
        } else if (!unsecured_oauthbearer(&j, oauth, sizeof(oauth))) {
            error_add(
                t, origin,
                "%s: OAuthBearerLoginModule needs sasl.oauthbearer.token.endpoint.url "
                "(tokens from an OIDC endpoint) or unsecured tokens "
                "(unsecuredLoginStringClaim_sub=\"...\", values without spaces)",
                origin);
        } else {
            put(t, "sasl.oauthbearer.config", oauth, origin, 0, false);
            put(t, "enable.sasl.oauthbearer.unsecure.jwt", "true", origin, 0, false);
        }
    } else if (module_is(&j, "Krb5LoginModule")) {
        error_add(t, origin,
                  "%s: Kerberos is configured with librdkafka's keys instead: "
                  "sasl.mechanism=GSSAPI, sasl.kerberos.service.name, "
                  "sasl.kerberos.principal and sasl.kerberos.keytab",
                  origin);
    } else {
        error_add(t, origin,
                  "%s: login module %s cannot be translated; only PlainLoginModule, "
                  "ScramLoginModule and unsecured OAuthBearerLoginModule can",
                  origin, j.module);
    }
    json_decref(j.options);
}

/* -------------------------------------------------------------------------
 * The table
 */

static const char *const acks_values[] = {"all", "-1", "0", "1", NULL};
static const char *const compression_values[] = {"none", "gzip", "snappy",
                                                 "lz4",  "zstd", NULL};
static const char *const reset_values[] = {"latest", "earliest", "none", NULL};
static const char *const isolation_values[] = {"read_uncommitted", "read_committed",
                                               NULL};
static const char *const group_protocols[] = {"classic", NULL};
static const char *const store_types[] = {"JKS", "PKCS12", "PEM", NULL};
/* The retrievers that fetch from sasl.oauthbearer.token.endpoint.url, as
 * librdkafka's OIDC does; the JWT bearer grant and files it has not. */
static const char *const jwt_retrievers[] = {
    "org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever",
    "org.apache.kafka.common.security.oauthbearer.ClientCredentialsJwtRetriever", NULL};
static const char *const two_phase_values[] = {"false", NULL};

#define SAME(n, r)                                                                       \
    {                                                                                    \
        .name = n, .roles = r, .rdkafka = n                                              \
    }
#define RENAMED(n, r, k)                                                                 \
    {                                                                                    \
        .name = n, .roles = r, .rdkafka = k                                              \
    }
#define IGNORED(n, r, why)                                                               \
    {                                                                                    \
        .name = n, .roles = r, .note = why                                               \
    }

static const char NO_JAVA[] = "a Java class: Java code does not run in tributary";
static const char NO_METRICS[] = "client metrics are tributary's own (/metrics)";
static const char NO_LOGIN[] = "Java's login refresh; librdkafka refreshes by itself";
static const char NO_SERDE[] = "records are bytes; the converters (key.converter, "
                               "value.converter) turn them into records";
static const char NO_CLIENT_CHECK[] =
    "for Java's check of the tokens it fetches; librdkafka does not check them";
static const char NO_SHARE[] = "for Java's share consumer (share groups, KIP-932); sink "
                               "tasks read in a consumer group";
static const char BROKER_SIDE[] = "for validating tokens, which brokers do";
static const char NO_JWT_BEARER[] =
    "for Java's JwtBearerJwtRetriever (the JWT bearer grant), which librdkafka 2.8 does "
    "not have: sasl.oauthbearer.jwt.retriever.class refuses it";
static const char NO_REBOOTSTRAP_KEYS[] =
    "librdkafka before 2.10 has no such key; it rebootstraps by itself";

static const java_key_t java_keys[] = {
    {.name = "acks", .roles = P, .rdkafka = "acks", .one_of = acks_values},
    SAME("allow.auto.create.topics", C),
    IGNORED("auto.commit.interval.ms", C,
            "the sink engine commits what each flush recorded, within a second"),
    IGNORED("auto.include.jmx.reporter", PCA, NO_METRICS),
    {.name = "auto.offset.reset",
     .roles = C,
     .translate = translate_runtime,
     .one_of = reset_values,
     .note = "applied by the sink engine where a partition has no stored or committed "
             "offset"},
    SAME("batch.size", P),
    IGNORED("bootstrap.controllers", A,
            "the admin client talks to brokers (bootstrap.servers)"),
    IGNORED("bootstrap.resolve.timeout.ms", PCA,
            "librdkafka has no such bound: it keeps resolving bootstrap.servers"),
    SAME("bootstrap.servers", PCA),
    {.name = "buffer.memory",
     .roles = P,
     .rdkafka = "queue.buffering.max.kbytes",
     .translate = translate_renamed,
     .scale = 1024,
     .note = "bytes, as kilobytes rounded up"},
    IGNORED("buffer.memory.allocation.strategy", P,
            "Java's buffer pool; librdkafka's queue is bounded by buffer.memory"),
    SAME("check.crcs", C),
    IGNORED("client.dns.lookup", PCA,
            "librdkafka tries every address a name resolves to (use_all_dns_ips)"),
    SAME("client.id", PCA),
    IGNORED("client.rack", P, "for Java's rack-aware partitioner only"),
    SAME("client.rack", C),
    {.name = "compression.gzip.level",
     .roles = P,
     .rdkafka = "compression.level",
     .translate = translate_compression_level,
     .note = "when compression.type=gzip"},
    {.name = "compression.lz4.level",
     .roles = P,
     .rdkafka = "compression.level",
     .translate = translate_compression_level,
     .note = "when compression.type=lz4"},
    {.name = "compression.type",
     .roles = P,
     .rdkafka = "compression.type",
     .one_of = compression_values},
    {.name = "compression.zstd.level",
     .roles = P,
     .rdkafka = "compression.level",
     .translate = translate_compression_level,
     .note = "when compression.type=zstd; librdkafka takes levels up to 12"},
    IGNORED("config.providers", PCA,
            "Java ConfigProvider classes do not run in tributary; it resolves "
            "${file:...} references itself (the worker's config.providers)"),
    SAME("connections.max.idle.ms", PCA),
    IGNORED("default.api.timeout.ms", C | A,
            "tributary gives every blocking call its own timeout"),
    RENAMED("delivery.timeout.ms", P, "message.timeout.ms"),
    {.name = "enable.auto.commit",
     .roles = C,
     .rdkafka = "enable.auto.commit",
     .note = "managed: refused in overrides; a sink commits what its flushes recorded "
             "only"},
    SAME("enable.idempotence", P),
    IGNORED("enable.metrics.push", PCA, NO_METRICS),
    IGNORED("exclude.internal.topics", C, "not configurable in librdkafka"),
    SAME("fetch.max.bytes", C),
    RENAMED("fetch.max.wait.ms", C, "fetch.wait.max.ms"),
    SAME("fetch.min.bytes", C),
    SAME("group.id", C),
    SAME("group.instance.id", C),
    {.name = "group.protocol",
     .roles = C,
     .one_of = group_protocols,
     .why_not = "consumer (KIP-848) is refused: librdkafka 2.8 has it as early access, "
                "not for production use",
     .note = "tributary's sink groups use the classic group protocol"},
    IGNORED("group.remote.assignor", C,
            "for group.protocol=consumer, which tributary does not use"),
    SAME("heartbeat.interval.ms", C),
    IGNORED("interceptor.classes", P | C, NO_JAVA),
    IGNORED("internal.leave.group.on.close", C, "Java's internal setting"),
    IGNORED("internal.throw.on.fetch.stable.offset.unsupported", C,
            "Java's internal setting"),
    {.name = "isolation.level",
     .roles = C,
     .rdkafka = "isolation.level",
     .one_of = isolation_values},
    IGNORED("key.deserializer", C, NO_SERDE),
    IGNORED("key.serializer", P, NO_SERDE),
    SAME("linger.ms", P),
    IGNORED("max.block.ms", P,
            "librdkafka never blocks a send; the source engine waits for room when "
            "the queue is full"),
    RENAMED("max.in.flight.requests.per.connection", P, "max.in.flight"),
    SAME("max.partition.fetch.bytes", C),
    SAME("max.poll.interval.ms", C),
    {.name = TB_JAVA_MAX_POLL_RECORDS,
     .roles = C,
     .translate = translate_runtime,
     .note = "the most records a sink task hands its connector at once (at most 1024)"},
    RENAMED("max.request.size", P, "message.max.bytes"),
    RENAMED("metadata.max.age.ms", PCA, "topic.metadata.refresh.interval.ms"),
    IGNORED("metadata.max.idle.ms", P, "librdkafka keeps the metadata of topics it uses"),
    IGNORED("metadata.cluster.check.enable", PCA,
            "librdkafka 2.8 does not check the cluster id when it rebootstraps"),
    IGNORED("metadata.recovery.rebootstrap.trigger.ms", PCA, NO_REBOOTSTRAP_KEYS),
    IGNORED("metadata.recovery.strategy", PCA, NO_REBOOTSTRAP_KEYS),
    IGNORED("metric.reporters", PCA, NO_METRICS),
    IGNORED("metrics.num.samples", PCA, NO_METRICS),
    IGNORED("metrics.recording.level", PCA, NO_METRICS),
    IGNORED("metrics.sample.window.ms", PCA, NO_METRICS),
    {.name = "partition.assignment.strategy",
     .roles = C,
     .rdkafka = "partition.assignment.strategy",
     .translate = translate_assignors,
     .note = "sinks: cooperative-sticky unless set; Java's RangeAssignor, "
             "RoundRobinAssignor and CooperativeStickyAssignor by class or librdkafka's "
             "name; a list mixing eager and cooperative ones keeps those of its first "
             "kind, the protocol a Java group naming it uses"},
    IGNORED("partitioner.adaptive.partitioning.enable", P, "Java's partitioner only"),
    IGNORED("partitioner.availability.timeout.ms", P, "Java's partitioner only"),
    {.name = "partitioner.class",
     .roles = P,
     .rdkafka = "partitioner",
     .translate = translate_partitioner,
     .note = "DefaultPartitioner is murmur2_random, UniformStickyPartitioner random; "
             "other classes are ignored (Java code does not run in tributary)"},
    IGNORED("partitioner.ignore.keys", P, "Java's partitioner only"),
    IGNORED("partitioner.rack.aware", P, "Java's partitioner only"),
    {.name = "receive.buffer.bytes",
     .roles = PCA,
     .rdkafka = "socket.receive.buffer.bytes",
     .translate = translate_socket_buffer,
     .note = "-1 is 0, the system's default"},
    SAME("reconnect.backoff.max.ms", PCA),
    SAME("reconnect.backoff.ms", PCA),
    RENAMED("request.timeout.ms", P, "request.timeout.ms"),
    RENAMED("request.timeout.ms", C | A, "socket.timeout.ms"),
    RENAMED("retries", P | A, "message.send.max.retries"),
    SAME("retry.backoff.max.ms", PCA),
    SAME("retry.backoff.ms", PCA),
    IGNORED("sasl.client.callback.handler.class", PCA, NO_JAVA),
    {.name = "sasl.jaas.config",
     .roles = PCA,
     .translate = translate_jaas,
     .note = "PlainLoginModule and ScramLoginModule: sasl.username and sasl.password; "
             "unsecured OAuthBearerLoginModule: sasl.oauthbearer.config; others "
             "refused"},
    {.name = "sasl.kerberos.kinit.cmd",
     .roles = PCA,
     .rdkafka = "sasl.kerberos.kinit.cmd",
     .translate = translate_kinit,
     .note = "the kinit program, in librdkafka's kinit command line"},
    SAME("sasl.kerberos.min.time.before.relogin", PCA),
    SAME("sasl.kerberos.service.name", PCA),
    IGNORED("sasl.kerberos.ticket.renew.jitter", PCA, NO_LOGIN),
    IGNORED("sasl.kerberos.ticket.renew.window.factor", PCA, NO_LOGIN),
    IGNORED("sasl.login.callback.handler.class", PCA, NO_JAVA),
    IGNORED("sasl.login.class", PCA, NO_JAVA),
    IGNORED("sasl.login.connect.timeout.ms", PCA, NO_LOGIN),
    IGNORED("sasl.login.read.timeout.ms", PCA, NO_LOGIN),
    IGNORED("sasl.login.refresh.buffer.seconds", PCA, NO_LOGIN),
    IGNORED("sasl.login.refresh.min.period.seconds", PCA, NO_LOGIN),
    IGNORED("sasl.login.refresh.window.factor", PCA, NO_LOGIN),
    IGNORED("sasl.login.refresh.window.jitter", PCA, NO_LOGIN),
    IGNORED("sasl.login.retry.backoff.max.ms", PCA, NO_LOGIN),
    IGNORED("sasl.login.retry.backoff.ms", PCA, NO_LOGIN),
    SAME("sasl.mechanism", PCA),
    IGNORED("sasl.oauthbearer.allow.unverified.audience", PCA, NO_CLIENT_CHECK),
    IGNORED("sasl.oauthbearer.allow.unverified.issuer", PCA, NO_CLIENT_CHECK),
    IGNORED("sasl.oauthbearer.assertion.algorithm", PCA, NO_JWT_BEARER),
    IGNORED("sasl.oauthbearer.assertion.claim.aud", PCA, NO_JWT_BEARER),
    IGNORED("sasl.oauthbearer.assertion.claim.exp.seconds", PCA, NO_JWT_BEARER),
    IGNORED("sasl.oauthbearer.assertion.claim.iss", PCA, NO_JWT_BEARER),
    IGNORED("sasl.oauthbearer.assertion.claim.jti.include", PCA, NO_JWT_BEARER),
    IGNORED("sasl.oauthbearer.assertion.claim.nbf.seconds", PCA, NO_JWT_BEARER),
    IGNORED("sasl.oauthbearer.assertion.claim.sub", PCA, NO_JWT_BEARER),
    IGNORED("sasl.oauthbearer.assertion.file", PCA, NO_JWT_BEARER),
    IGNORED("sasl.oauthbearer.assertion.private.key.file", PCA, NO_JWT_BEARER),
    IGNORED("sasl.oauthbearer.assertion.private.key.passphrase", PCA, NO_JWT_BEARER),
    IGNORED("sasl.oauthbearer.assertion.template.file", PCA, NO_JWT_BEARER),
    RENAMED("sasl.oauthbearer.client.credentials.client.id", PCA,
            "sasl.oauthbearer.client.id"),
    RENAMED("sasl.oauthbearer.client.credentials.client.secret", PCA,
            "sasl.oauthbearer.client.secret"),
    IGNORED("sasl.oauthbearer.clock.skew.seconds", PCA, BROKER_SIDE),
    IGNORED("sasl.oauthbearer.expected.audience", PCA, BROKER_SIDE),
    IGNORED("sasl.oauthbearer.expected.issuer", PCA, BROKER_SIDE),
    IGNORED("sasl.oauthbearer.header.urlencode", PCA, "not in librdkafka 2.8"),
    IGNORED("sasl.oauthbearer.jwks.endpoint.refresh.ms", PCA, BROKER_SIDE),
    IGNORED("sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", PCA, BROKER_SIDE),
    IGNORED("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", PCA, BROKER_SIDE),
    IGNORED("sasl.oauthbearer.jwks.endpoint.url", PCA, BROKER_SIDE),
    {.name = "sasl.oauthbearer.jwt.retriever.class",
     .roles = PCA,
     .one_of = jwt_retrievers,
     .note = "librdkafka fetches tokens from sasl.oauthbearer.token.endpoint.url; "
             "Java's other retrievers are refused"},
    IGNORED("sasl.oauthbearer.jwt.validator.class", PCA, NO_JAVA),
    SAME("sasl.oauthbearer.scope", PCA),
    IGNORED("sasl.oauthbearer.scope.claim.name", PCA, BROKER_SIDE),
    IGNORED("sasl.oauthbearer.sub.claim.name", PCA, BROKER_SIDE),
    {.name = "sasl.oauthbearer.token.endpoint.url",
     .roles = PCA,
     .rdkafka = "sasl.oauthbearer.token.endpoint.url",
     .translate = translate_token_endpoint,
     .note = "and sasl.oauthbearer.method=oidc: librdkafka fetches the tokens"},
    SAME("security.protocol", PCA),
    IGNORED("security.providers", PCA, NO_JAVA),
    {.name = "send.buffer.bytes",
     .roles = PCA,
     .rdkafka = "socket.send.buffer.bytes",
     .translate = translate_socket_buffer,
     .note = "-1 is 0, the system's default"},
    SAME("session.timeout.ms", C),
    IGNORED("share.acknowledgement.mode", C, NO_SHARE),
    IGNORED("share.acquire.mode", C, NO_SHARE),
    IGNORED("socket.connection.setup.timeout.max.ms", PCA,
            "librdkafka has one timeout, socket.connection.setup.timeout.ms"),
    SAME("socket.connection.setup.timeout.ms", PCA),
    {.name = "ssl.cipher.suites",
     .roles = PCA,
     .rdkafka = "ssl.cipher.suites",
     .note = "OpenSSL's cipher names"},
    IGNORED("ssl.enabled.protocols", PCA,
            "librdkafka uses OpenSSL's protocols (TLS 1.2 and 1.3)"),
    {.name = "ssl.endpoint.identification.algorithm",
     .roles = PCA,
     .rdkafka = "ssl.endpoint.identification.algorithm",
     .translate = translate_endpoint_check,
     .note = "empty is none"},
    IGNORED("ssl.engine.factory.class", PCA, NO_JAVA),
    SAME("ssl.key.password", PCA),
    IGNORED("ssl.keymanager.algorithm", PCA, "Java's TLS only"),
    RENAMED("ssl.keystore.certificate.chain", PCA, "ssl.certificate.pem"),
    RENAMED("ssl.keystore.key", PCA, "ssl.key.pem"),
    {.name = "ssl.keystore.location",
     .roles = PCA,
     .translate = translate_store,
     .note = "PKCS12: ssl.keystore.location; PEM: ssl.certificate.location and "
             "ssl.key.location; JKS refused"},
    SAME("ssl.keystore.password", PCA),
    {.name = "ssl.keystore.type",
     .roles = PCA,
     .one_of = store_types,
     .note = "says how ssl.keystore.location is read"},
    IGNORED("ssl.protocol", PCA, "librdkafka uses OpenSSL's protocols"),
    IGNORED("ssl.provider", PCA, "Java's TLS only"),
    IGNORED("ssl.secure.random.implementation", PCA, "Java's TLS only"),
    IGNORED("ssl.trustmanager.algorithm", PCA, "Java's TLS only"),
    RENAMED("ssl.truststore.certificates", PCA, "ssl.ca.pem"),
    {.name = "ssl.truststore.location",
     .roles = PCA,
     .translate = translate_store,
     .note = "PEM: ssl.ca.location; JKS and PKCS12 refused"},
    IGNORED("ssl.truststore.password", PCA, "PEM trust stores have no password"),
    {.name = "ssl.truststore.type",
     .roles = PCA,
     .one_of = store_types,
     .note = "says how ssl.truststore.location is read"},
    SAME("transaction.timeout.ms", P),
    {.name = "transaction.two.phase.commit.enable",
     .roles = P,
     .one_of = two_phase_values,
     .note = "transactions committed by an external manager (KIP-939): librdkafka has "
             "none, true is refused"},
    {.name = "transactional.id",
     .roles = P,
     .rdkafka = "transactional.id",
     .note = "managed: refused in overrides"},
    IGNORED("value.deserializer", C, NO_SERDE),
    IGNORED("value.serializer", P, NO_SERDE),
};

#define JAVA_KEY_COUNT (sizeof(java_keys) / sizeof(java_keys[0]))

/* The entry of name for role; with any_role, the first of any role. */
static const java_key_t *find(const char *name, tb_client_role_t role, bool any_role)
{
    for (size_t i = 0; i < JAVA_KEY_COUNT; i++) {
        if (strcmp(java_keys[i].name, name) == 0 &&
            (any_role || (java_keys[i].roles & (1u << role)) != 0)) {
            return &java_keys[i];
        }
    }
    return NULL;
}

static bool listed(const char *value, const char *const *allowed)
{
    for (size_t i = 0; allowed[i] != NULL; i++) {
        if (strcmp(value, allowed[i]) == 0) {
            return true;
        }
    }
    return false;
}

static void translate_key(translation_t *t, const char *name, const char *value,
                          const char *origin)
{
    const java_key_t *key = find(name, t->role, false);
    if (key == NULL) {
        if (find(name, t->role, true) == NULL) {
            put(t, name, value, origin, 0, false); /* librdkafka's own key */
        }
        return; /* another client's key: tb_java_client_key_ignored */
    }
    if (key->one_of != NULL && !tb_secret_is_reference(value) &&
        !listed(value, key->one_of)) {
        char allowed[256] = "";
        size_t used = 0;
        for (size_t i = 0; key->one_of[i] != NULL && used < sizeof(allowed); i++) {
            used += (size_t)snprintf(allowed + used, sizeof(allowed) - used, "%s%s",
                                     i ? ", " : "", key->one_of[i]);
        }
        error_add(t, origin,
                  "Invalid value %s for configuration %s: String must be one of: %s%s%s",
                  value, origin, allowed, key->why_not != NULL ? "; " : "",
                  key->why_not != NULL ? key->why_not : "");
        return;
    }
    if (key->translate != NULL) {
        key->translate(t, key, value, origin);
    } else if (key->rdkafka != NULL) {
        put(t, key->rdkafka, value, origin, 0, false);
    }
}

int tb_java_client_keys_translate(tb_client_role_t role, json_t *props,
                                  const json_t *origins, json_t *errors)
{
    size_t before = tb_config_error_count(errors);
    translation_t t = {.role = role,
                       .in = props,
                       .origins = origins,
                       .out = json_object(),
                       .setters = json_object(),
                       .scratch = rd_kafka_conf_new(),
                       .errors = errors};
    const char *name;
    json_t *value;
    json_object_foreach (props, name, value) {
        const char *origin = json_string_value(json_object_get(origins, name));
        t.written = json_string_value(value);
        translate_key(&t, name, t.written, origin != NULL ? origin : name);
    }
    json_object_clear(props);
    json_object_update(props, t.out);
    json_decref(t.out);
    json_decref(t.setters);
    rd_kafka_conf_destroy(t.scratch);
    return tb_config_error_count(errors) > before ? -1 : 0;
}

/* -------------------------------------------------------------------------
 * Keys without effect, and the reference
 */

static const char *const other_role_notes[] = {
    "not a producer key: the producer does not use it",
    "not a consumer key: the consumer does not use it",
    "not an admin client key: the admin client does not use it"};

bool tb_java_client_key_is_connection(const char *key)
{
    return strcmp(key, "bootstrap.servers") == 0 ||
           strcmp(key, "security.protocol") == 0 || strncmp(key, "ssl.", 4) == 0 ||
           strncmp(key, "sasl.", 5) == 0;
}

const char *tb_java_client_key_ignored(const char *config_key, const char *value)
{
    tb_client_role_t role = TB_CLIENT_PRODUCER;
    bool any_role = true;
    const char *name = config_key;
    for (size_t r = 0; r < 3 && any_role; r++) {
        size_t n = strlen(role_names[r]);
        if (strncmp(config_key, role_names[r], n) == 0 && config_key[n] == '.') {
            role = (tb_client_role_t)r;
            any_role = false;
            name = config_key + n + 1;
            name += strncmp(name, "override.", 9) == 0 ? 9 : 0;
        }
    }
    const java_key_t *key = find(name, role, any_role);
    if (key == NULL) {
        return find(name, role, true) != NULL ? other_role_notes[role] : NULL;
    }
    if (key->translate == translate_partitioner && value != NULL &&
        partitioner_of(value) == NULL) {
        return "a Java class: Java code does not run in tributary; librdkafka's "
               "murmur2_random partitioner applies, as Java's default does";
    }
    return key->rdkafka == NULL && key->translate == NULL && key->one_of == NULL
               ? key->note
               : NULL;
}

/* What a key becomes, for the reference. */
static const char *becomes(const java_key_t *key)
{
    if (key->translate == translate_runtime) {
        return "(applied by tributary)";
    }
    if (key->translate == translate_jaas || key->translate == translate_store) {
        return "(see notes)";
    }
    if (key->rdkafka == NULL) {
        return key->one_of != NULL ? "(checked)" : "(ignored, logged)";
    }
    return NULL;
}

int tb_java_client_keys_doc_markdown(char **doc)
{
    static const char *const clients[] = {
        "",      "producer",        "consumer",        "producer, consumer",
        "admin", "producer, admin", "consumer, admin", "all"};
    if (tb_config_doc_append(
            doc,
            "## Java client keys\n\n"
            "Kafka's Java client keys are accepted wherever client keys are: a "
            "connector's producer.override.*, consumer.override.* and admin.override.*, "
            "the worker's producer.*, consumer.* and admin.* keys, and the worker's "
            "client keys. Each becomes the librdkafka property below (a key not listed "
            "is librdkafka's and is passed as written). A key without effect is "
            "accepted and logged once, when the connector is stored or the worker "
            "starts. librdkafka checks every value; an error names the key as "
            "written.\n\n"
            "| Java key | Clients | librdkafka | Notes |\n|---|---|---|---|\n") != 0) {
        return -1;
    }
    for (size_t i = 0; i < JAVA_KEY_COUNT; i++) {
        const java_key_t *key = &java_keys[i];
        const char *what = becomes(key);
        int rc = what != NULL
                     ? tb_config_doc_append(doc, "| `%s` | %s | %s | %s |\n", key->name,
                                            clients[key->roles], what,
                                            key->note != NULL ? key->note : "")
                     : tb_config_doc_append(doc, "| `%s` | %s | `%s` | %s |\n", key->name,
                                            clients[key->roles], key->rdkafka,
                                            key->note != NULL ? key->note : "");
        if (rc != 0) {
            return -1;
        }
    }
    return tb_config_doc_append(doc, "\n");
}
