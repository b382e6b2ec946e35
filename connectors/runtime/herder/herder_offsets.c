/* Reading and changing a connector's offsets (herder_internal.h). */
#include "connectors/runtime/herder/herder_internal.h"

tb_err_t tb_herder_offsets_get(tb_herder_t *herder, const char *name, json_t **out,
                               char *msg, size_t msg_size)
{
    tb_known_connector_t *c =
        tb_herder_lock_connector(herder, name, "Connector %s not found", msg, msg_size);
    if (c == NULL) {
        return TB_ERR_NOT_FOUND;
    }
    tb_err_t err = tb_offsets_get(herder->store, name, out, msg, msg_size);
    pthread_mutex_unlock(&herder->lock);
    return err;
}

tb_err_t tb_herder_offsets_alter(tb_herder_t *herder, const char *name,
                                 const json_t *offsets, json_t **out, char *msg,
                                 size_t msg_size)
{
    pthread_mutex_lock(&herder->lock);
    tb_known_connector_t *c;
    if (tb_herder_claim(herder, name, &c, msg, msg_size) != TB_OK) {
        pthread_mutex_unlock(&herder->lock);
        return TB_ERR_UNAVAILABLE;
    }
    bool tasks_running = c != NULL && tb_worker_runs_tasks(herder->worker, name);
    pthread_mutex_unlock(&herder->lock);
    /* without the lock, since the admin calls to the group may take long */
    tb_err_t err = c == NULL ? tb_herder_fail(TB_ERR_NOT_FOUND, msg, msg_size,
                                              "Connector %s not found", name)
                             : tb_offsets_alter(&herder->offsets, c, tasks_running,
                                                offsets, out, msg, msg_size);
    pthread_mutex_lock(&herder->lock);
    tb_herder_release(herder, name);
    pthread_mutex_unlock(&herder->lock);
    return err;
}
