/* SPDX-License-Identifier: Apache-2.0 */
/* Replays a fuzz corpus without libFuzzer: every file under the directories
 * (or the files) given on the command line goes once through the target, so
 * the corpus runs as an ordinary test under the sanitizers of the build. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_MAX_BYTES (1u << 20)

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rbe");
	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	uint8_t *buf = malloc(REPLAY_MAX_BYTES);
	size_t n = buf ? fread(buf, 1, REPLAY_MAX_BYTES, f) : 0;
	fclose(f);
	if (!buf)
		return -1;
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

static int replay(const char *path, unsigned *count)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return replay_file(path);
	}
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int r = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char child[4096];
		if (snprintf(child, sizeof(child), "%s/%s", path, e->d_name) >= (int)sizeof(child))
			continue;
		if (replay(child, count) < 0)
			r = -1;
	}
	closedir(d);
	return r;
}

int main(int argc, char **argv)
{
	unsigned count = 0;
	int r = 0;
	for (int i = 1; i < argc; i++)
		if (replay(argv[i], &count) < 0)
			r = 1;
	if (count == 0) {
		fprintf(stderr, "replay: no inputs found\n");
		return 1;
	}
	printf("replayed %u inputs\n", count);
	return r;
}
