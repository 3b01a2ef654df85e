/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the pod map: an answer of the kubelet's pod resources List, as raw
 * bytes, decoded for two resource names and then rendered into the metrics
 * text with a node of chips, so that every holder's names go through the
 * label escaping. A map must hold only chip IDs and names that fit, sorted
 * and unique; the text must end in a newline. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "telemetry/metrics.h"
#include "telemetry/podres.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "ascend.com/npu", "ascend.com/npu-vir04" };
	struct pod_map *map;
	if (pod_map_decode(data, size, names, 2, &map) < 0)
		return 0;
	if (map->count > POD_MAP_MAX_HOLDERS)
		abort();
	for (size_t i = 0; i < map->count; i++) {
		const struct pod_holder *h = &map->holders[i];
		char chip[NPU_DEVICE_ID_MAX];
		if (pod_map_chip_of(h->chip_id, chip) < 0 || strcmp(chip, h->chip_id) != 0)
			abort();
		if (i > 0 && memcmp(&map->holders[i - 1], h, sizeof(*h)) == 0)
			abort(); /* unique */
	}

	struct metrics *m;
	if (metrics_new("fuzz", &m) < 0)
		abort();
	struct npu_snapshot *s = npu_snapshot_new(4);
	if (!s)
		abort();
	for (uint32_t i = 0; i < 4; i++) {
		snprintf(s->devices[i].id, sizeof(s->devices[i].id), "npu-%u", i);
		s->devices[i].chip.phy_id = i;
		s->devices[i].healthy = true;
	}
	metrics_publish_chips(m, s);
	metrics_publish_pods(m, map);
	char *text;
	size_t len;
	if (metrics_render(m, &text, &len) == 0) {
		if (len == 0 || text[len - 1] != '\n')
			abort();
		free(text);
	}
	npu_snapshot_unref(s);
	pod_map_unref(map);
	metrics_free(m);
	return 0;
}
