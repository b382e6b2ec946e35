#include "connectors/runtime/cluster/tb_consumer_protocol.h"

#include <string.h>

/* A bounds-checked cursor over big-endian protocol bytes. */
typedef struct {
    const unsigned char *at;
    size_t left;
    bool bad; /* set once a read ran past the end; later reads give 0 */
} reader_t;

static const unsigned char *take(reader_t *r, size_t n)
{
    if (r->bad || r->left < n) {
        r->bad = true;
        return NULL;
    }
    const unsigned char *p = r->at;
    r->at += n;
    r->left -= n;
    return p;
}

static int32_t read_int(reader_t *r, size_t width)
{
    const unsigned char *p = take(r, width);
    uint32_t v = 0;
    for (size_t i = 0; p != NULL && i < width; i++) {
        v = v << 8 | p[i];
    }
    return width == 2 ? (int16_t)v : (int32_t)v;
}

int tb_consumer_assignment_holds(const void *data, size_t size, const char *topic,
                                 int32_t partition)
{
    if (size == 0) {
        return 0;
    }
    reader_t r = {.at = data, .left = size};
    (void)read_int(&r, 2); /* version: every version starts with the topics */
    int32_t topics = read_int(&r, 4);
    if (topics < 0) {
        return -1;
    }
    bool held = false;
    size_t topic_len = strlen(topic);
    for (int32_t t = 0; t < topics && !r.bad; t++) {
        int32_t name_len = read_int(&r, 2);
        const unsigned char *name = name_len >= 0 ? take(&r, (size_t)name_len) : NULL;
        int32_t partitions = read_int(&r, 4);
        if (name == NULL || partitions < 0) {
            return -1;
        }
        bool same_topic =
            (size_t)name_len == topic_len && memcmp(name, topic, topic_len) == 0;
        for (int32_t p = 0; p < partitions && !r.bad; p++) {
            if (read_int(&r, 4) == partition && same_topic) {
                held = true;
            }
        }
    }
    return r.bad ? -1 : held;
}
