/* SPDX-License-Identifier: Apache-2.0 */
#include "dra/registration.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/macro.h"
#include "dra_api.h"
#include "pluginregistration.pb-c.h"

int dra_registration_init(struct dra_registration *reg, const char *driver_name, const char *endpoint,
			  void (*notified)(void *ctx), void *notified_ctx)
{
	*reg = (struct dra_registration){ .notified = notified, .notified_ctx = notified_ctx };
	if (str_copy(reg->driver_name, sizeof(reg->driver_name), driver_name) < 0 ||
	    str_copy(reg->endpoint, sizeof(reg->endpoint), endpoint) < 0)
		return -ENAMETOOLONG;
	pthread_mutex_init(&reg->lock, NULL);
	return 0;
}

void dra_registration_fini(struct dra_registration *reg)
{
	pthread_mutex_destroy(&reg->lock);
}

void dra_registration_status(struct dra_registration *reg, struct dra_registration_status *ret_status)
{
	pthread_mutex_lock(&reg->lock);
	*ret_status = reg->status;
	pthread_mutex_unlock(&reg->lock);
}

static void get_info(void *ctx, const uint8_t *req, size_t len, struct gs_reply *reply)
{
	struct dra_registration *reg = ctx;
	Pluginregistration__InfoRequest *r = pluginregistration__info_request__unpack(NULL, len, req);
	if (!r) {
		gs_reply_error(reply, GRPC_STATUS_INVALID_ARGUMENT, "malformed InfoRequest");
		return;
	}
	pluginregistration__info_request__free_unpacked(r, NULL);
	/* Most recent first: the kubelet takes the first DRA service it knows,
	 * and the health service when it knows it. */
	static char v1[] = DRA_SERVICE_V1, v1beta1[] = DRA_SERVICE_V1BETA1, health[] = DRA_SERVICE_HEALTH_V1,
		    health_alpha[] = DRA_SERVICE_HEALTH_V1ALPHA1, type[] = PLUGINREG_TYPE_DRA;
	static char *versions[] = { v1, v1beta1, health, health_alpha };
	Pluginregistration__PluginInfo info;
	pluginregistration__plugin_info__init(&info);
	info.type = type;
	info.name = reg->driver_name;
	info.endpoint = reg->endpoint;
	info.n_supported_versions = ELEMENTSOF(versions);
	info.supported_versions = versions;
	gs_reply_message(reply, &info.base);
	pthread_mutex_lock(&reg->lock);
	reg->status.get_info_calls++;
	pthread_mutex_unlock(&reg->lock);
}

static void notify(void *ctx, const uint8_t *req, size_t len, struct gs_reply *reply)
{
	struct dra_registration *reg = ctx;
	Pluginregistration__RegistrationStatus *r = pluginregistration__registration_status__unpack(NULL, len, req);
	if (!r) {
		gs_reply_error(reply, GRPC_STATUS_INVALID_ARGUMENT, "malformed RegistrationStatus");
		return;
	}
	pthread_mutex_lock(&reg->lock);
	reg->status.notifications++;
	reg->status.registered = r->plugin_registered;
	snprintf(reg->status.error, sizeof(reg->status.error), "%s", r->error ? r->error : "");
	pthread_mutex_unlock(&reg->lock);
	pluginregistration__registration_status__free_unpacked(r, NULL);
	if (reg->notified)
		reg->notified(reg->notified_ctx);
	/* RegistrationStatusResponse is empty: no body. */
}

static const struct gs_method methods[] = {
	{ .path = PLUGINREG_METHOD_GET_INFO, .unary = get_info },
	{ .path = PLUGINREG_METHOD_NOTIFY, .unary = notify },
};

const struct gs_method *dra_registration_methods(size_t *ret_count)
{
	*ret_count = ELEMENTSOF(methods);
	return methods;
}
