#include "server/tb_advertised.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "server/tb_http.h"

/* The listener rest.advertised.listener picks (*chosen), parsed. -1 with
 * errstr. */
static int chosen_listener(const tb_worker_settings_t *settings, const char **chosen,
                           char *scheme, size_t scheme_size, char *host, size_t host_size,
                           unsigned *port, char *errstr, size_t errstr_size)
{
    const char *wanted = settings->rest_advertised_listener;
    size_t i;
    json_t *item;
    json_array_foreach ((json_t *)settings->listeners, i, item) {
        if (tb_http_listener_parse(json_string_value(item), scheme, scheme_size, host,
                                   host_size, port, errstr, errstr_size) != 0) {
            return -1;
        }
        if (wanted == NULL || strcmp(scheme, wanted) == 0) {
            *chosen = json_string_value(item);
            return 0;
        }
    }
    snprintf(errstr, errstr_size, "%s",
             wanted != NULL ? "rest.advertised.listener names a scheme that no listener "
                              "of listeners has"
                            : "listeners is empty: the worker has nothing to advertise");
    return -1;
}

/* Whether a host name can stand in a URL as it is. */
static bool plain_host(const char *host)
{
    bool bracketed = host[0] == '[' && host[strlen(host) - 1] == ']';
    return host[0] != '\0' && strpbrk(host, "/?#@ \t\r\n") == NULL &&
           (bracketed || strchr(host, ':') == NULL);
}

int tb_advertised_url(const tb_worker_settings_t *settings,
                      const tb_http_server_t *server, char *url, size_t url_size,
                      char *errstr, size_t errstr_size)
{
    char scheme[16], host[256], machine[256];
    unsigned port = 0;
    const char *listener = NULL;
    if (chosen_listener(settings, &listener, scheme, sizeof(scheme), host, sizeof(host),
                        &port, errstr, errstr_size) != 0) {
        return -1;
    }
    if (port == 0 && server != NULL) {
        port = tb_http_port(server, listener);
    }
    const char *advertised = settings->rest_advertised_host_name;
    const json_t *advertised_port = settings->rest_advertised_port;
    if (advertised != NULL && !plain_host(advertised)) {
        snprintf(errstr, errstr_size,
                 "rest.advertised.host.name \"%s\" is not a host name the other workers "
                 "can reach (a name, an IPv4 address or a bracketed IPv6 address)",
                 advertised);
        return -1;
    }
    if (json_is_integer(advertised_port) && json_integer_value(advertised_port) == 0) {
        snprintf(errstr, errstr_size,
                 "rest.advertised.port 0 is no port the other workers can reach");
        return -1;
    }
    bool everywhere =
        host[0] == '\0' || strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0;
    if (advertised == NULL && everywhere) {
        if (gethostname(machine, sizeof(machine)) != 0 || machine[0] == '\0') {
            snprintf(errstr, errstr_size,
                     "the listener binds every interface and this machine has no host "
                     "name: set rest.advertised.host.name");
            return -1;
        }
        machine[sizeof(machine) - 1] = '\0';
        advertised = machine;
    }
    bool ipv6 = advertised == NULL && strchr(host, ':') != NULL;
    snprintf(url, url_size, "%s://%s%s%s:%lld", scheme, ipv6 ? "[" : "",
             advertised != NULL ? advertised : host, ipv6 ? "]" : "",
             json_is_integer(advertised_port) ? json_integer_value(advertised_port)
                                              : (long long)port);
    return 0;
}

const char *tb_advertised_worker_id(const char *url)
{
    const char *sep = strstr(url, "://");
    return sep != NULL ? sep + 3 : url;
}
