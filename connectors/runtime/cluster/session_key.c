#include "connectors/runtime/cluster/tb_session_key.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "connectors/kafka/tb_kafka_conf.h"
#include "core/tb_log.h"
#include "core/tb_time.h"
#include "store/kafka/connect_records.h"
#include "store/kafka/kafka_log.h"

#define LOG_TIMEOUT_MS 30000

struct tb_session_keys {
    tb_kafka_log_t *log;
    char algorithm[32];
    int key_bits;
    long long ttl_ms;
    pthread_mutex_t lock; /* guards the keys below */
    tb_connect_session_key_t current, previous;
    int64_t current_read_ms; /* tb_monotonic_ms() when current was read */
};

const char *tb_session_key_digest(const char *algorithm)
{
    static const char *const names[][2] = {
        {"HmacSHA1", "SHA1"},     {"HmacSHA224", "SHA224"}, {"HmacSHA256", "SHA256"},
        {"HmacSHA384", "SHA384"}, {"HmacSHA512", "SHA512"},
    };
    for (size_t i = 0; algorithm != NULL && i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcasecmp(algorithm, names[i][0]) == 0) {
            return names[i][1];
        }
    }
    return NULL;
}

/* Makes key the newest one; the one it replaces becomes the previous. */
static void adopt(tb_session_keys_t *keys, const tb_connect_session_key_t *key)
{
    pthread_mutex_lock(&keys->lock);
    bool same = keys->current.len == key->len &&
                CRYPTO_memcmp(keys->current.bytes, key->bytes, key->len) == 0;
    if (!same) {
        OPENSSL_cleanse(&keys->previous, sizeof(keys->previous));
        keys->previous = keys->current;
        keys->current = *key;
        keys->current_read_ms = tb_monotonic_ms();
    }
    keys->current.created_ms = key->created_ms;
    pthread_mutex_unlock(&keys->lock);
    if (!same) {
        TB_LOG(TB_LOG_INFO, "tributary.cluster",
               "session key of %s (%zu bits) created at %lld ms is in use",
               key->algorithm, key->len * 8, key->created_ms);
    }
}

/* tb_kafka_log_cb: adopts each session key record. */
static void on_record(const tb_kafka_log_record_t *record, void *opaque)
{
    tb_session_keys_t *keys = opaque;
    tb_connect_session_key_t key;
    int bad = 0;
    if (record->key_len != strlen(TB_CONNECT_SESSION_KEY) ||
        memcmp(record->key, TB_CONNECT_SESSION_KEY, record->key_len) != 0 ||
        record->value == NULL) {
        return;
    }
    json_t *value = tb_connect_value_parse(record->value, record->value_len, &bad);
    if (tb_connect_session_key_parse(value, &key) == 0) {
        adopt(keys, &key);
    } else {
        TB_LOG(TB_LOG_WARN, "tributary.cluster",
               "skipping a session-key record that is not one");
    }
    OPENSSL_cleanse(&key, sizeof(key));
    json_decref(value);
}

/* The leader's part: writes a fresh key. */
static int rotate(tb_session_keys_t *keys, char *errstr, size_t errstr_size)
{
    tb_connect_session_key_t key = {.len = (size_t)keys->key_bits / 8,
                                    .created_ms = tb_wall_ms()};
    snprintf(key.algorithm, sizeof(key.algorithm), "%s", keys->algorithm);
    char *value = NULL;
    int rc = -1;
    if (RAND_bytes(key.bytes, (int)key.len) != 1) {
        snprintf(errstr, errstr_size, "cannot draw random bytes for a session key");
    } else if ((value = tb_connect_session_key_value(&key)) == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
    } else {
        tb_kafka_log_record_t record = {
            TB_CONNECT_SESSION_KEY, strlen(TB_CONNECT_SESSION_KEY), value, strlen(value)};
        rc = tb_kafka_log_write(keys->log, &record, 1, errstr, errstr_size);
    }
    if (rc == 0) {
        adopt(keys, &key);
    }
    if (value != NULL) {
        OPENSSL_cleanse(value, strlen(value));
        free(value);
    }
    OPENSSL_cleanse(&key, sizeof(key));
    return rc;
}

tb_session_keys_t *tb_session_keys_open(const tb_session_keys_options_t *options,
                                        char *errstr, size_t errstr_size)
{
    const char *digest = tb_session_key_digest(options->algorithm);
    tb_session_keys_t *keys = calloc(1, sizeof(*keys));
    if (keys == NULL || digest == NULL) {
        snprintf(errstr, errstr_size, "%s",
                 keys == NULL ? "out of memory"
                              : "inter.worker.key.generation.algorithm is not a Mac "
                                "algorithm tributary knows");
        free(keys);
        return NULL;
    }
    snprintf(keys->algorithm, sizeof(keys->algorithm), "%s", options->algorithm);
    keys->key_bits = options->key_bits > 0
                         ? options->key_bits
                         : 8 * EVP_MD_size(EVP_get_digestbyname(digest));
    keys->ttl_ms = options->ttl_ms;
    pthread_mutex_init(&keys->lock, NULL);
    rd_kafka_conf_t *conf = tb_kafka_conf_new(options->client_props, errstr, errstr_size);
    if (conf == NULL) {
        tb_session_keys_close(keys);
        return NULL;
    }
    tb_kafka_log_spec_t spec = {
        .topic = options->config_topic,
        .role = "config.storage.topic",
        .partitions = 1,
        .replication_factor = options->replication_factor,
        .single_partition = true,
        .timeout_ms = LOG_TIMEOUT_MS,
    };
    keys->log = tb_kafka_log_open(conf, &spec, errstr, errstr_size);
    rd_kafka_conf_destroy(conf);
    if (keys->log == NULL) {
        tb_session_keys_close(keys);
        return NULL;
    }
    return keys;
}

int tb_session_keys_tick(tb_session_keys_t *keys, bool leader, char *errstr,
                         size_t errstr_size)
{
    if (tb_kafka_log_read_to_end(keys->log, on_record, keys, errstr, errstr_size) != 0) {
        return -1;
    }
    if (!leader) {
        return 0;
    }
    pthread_mutex_lock(&keys->lock);
    bool due =
        keys->current.len == 0 || tb_wall_ms() >= keys->current.created_ms + keys->ttl_ms;
    pthread_mutex_unlock(&keys->lock);
    return due ? rotate(keys, errstr, errstr_size) : 0;
}

int tb_session_keys_get(tb_session_keys_t *keys, tb_connect_session_key_t *current,
                        tb_connect_session_key_t *previous)
{
    pthread_mutex_lock(&keys->lock);
    *current = keys->current;
    *previous = keys->previous;
    if (tb_monotonic_ms() - keys->current_read_ms >= TB_SESSION_KEY_GRACE_MS) {
        OPENSSL_cleanse(previous, sizeof(*previous));
    }
    pthread_mutex_unlock(&keys->lock);
    return current->len > 0 ? 0 : -1;
}

void tb_session_keys_close(tb_session_keys_t *keys)
{
    if (keys == NULL) {
        return;
    }
    tb_kafka_log_close(keys->log);
    pthread_mutex_destroy(&keys->lock);
    OPENSSL_cleanse(keys, sizeof(*keys));
    free(keys);
}
