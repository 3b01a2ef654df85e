#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The operator documentation (docs/*.md, docs/zh-CN/*.md, README.md,
# README.zh-CN.md) against what the project really has:
#
# - every operator page exists in English and in Chinese, and the READMEs
#   link to them;
# - relative links and their #anchors resolve;
# - configuration.md quotes `ascend-device-plugin --help` exactly and lists
#   every flag, and both READMEs' synopses of the daemon name every flag;
# - every command that runs ascend-device-plugin or kubelet-sim, and every
#   container argument shown, uses flags those binaries have;
# - every log line quoted in a ```log block is one the daemon can print:
#   the timestamp and level column as the logger writes them, and the
#   message matched in full against a format string of the log calls in
#   src/ (literal text exactly, each conversion by what it can print);
# - the table of log events in metrics.md, English and Chinese, has a row
#   for each name of src/base/log_events.h and for no other;
# - paths into the repository (deploy/..., examples/...) exist, the label
#   selector and image tag are the manifests', the resource figures are the
#   manifest's, and the "your own overlay" example of configuration.md and
#   the side-by-side and ascend-runtime examples of migration.md render;
# - LICENSE is the Apache License 2.0 and both READMEs link to it, and every
#   source file carries an SPDX line;
# - no page repeats a claim of something missing that the code contradicts
#   (stale_claims);
# - no doc, example, manifest or source file cites a file outside the
#   repository (a sibling "shared" directory, the internal facts file) or
#   speaks of internal process (who updates what).
#
# Usage: test_docs.sh PLUGIN_BINARY [KUBELET_SIM_BINARY]
set -euo pipefail
plugin=${1:?usage: test_docs.sh PATH_TO_ascend-device-plugin [PATH_TO_kubelet-sim]}
sim=${2:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"

# linked_both_ways FILE_A LINK_IN_A FILE_B LINK_IN_B
linked_both_ways() {
	grep -qF "]($2)" "$root/$1" || { echo "$1 does not link to $2"; return 1; }
	grep -qF "]($4)" "$root/$3" || { echo "$3 does not link to $4"; return 1; }
}

# same_code_blocks A B: the fenced code blocks of two pages, in order, are
# the same (commands and outputs are what programs print, in any language);
# only comments (# to the end of a line) may be translated. Fences indented
# under a list item count too.
code_blocks() {
	awk '/^[ \t]*```/ { inside = !inside; print; next } inside { sub(/(^|[ \t])#.*$/, ""); print }' "$root/$1"
}
same_code_blocks() {
	diff -u <(code_blocks "$1") <(code_blocks "$2")
}

pages=(install scheduling inference-images configuration troubleshooting uninstall metrics ascend-doctor performance
	cluster migration faq upgrade)
files=("$root/README.md")
check "README.zh-CN.md exists" test -f "$root/README.zh-CN.md"
[[ -f $root/README.zh-CN.md ]] && files+=("$root/README.zh-CN.md")
for page in "${pages[@]}"; do
	check "docs/$page.md exists" test -f "$root/docs/$page.md"
	check "docs/zh-CN/$page.md exists" test -f "$root/docs/zh-CN/$page.md"
	[[ -f $root/docs/$page.md ]] && files+=("$root/docs/$page.md")
	[[ -f $root/docs/zh-CN/$page.md ]] && files+=("$root/docs/zh-CN/$page.md")
	check "README.md links to docs/$page.md" grep -qF "](docs/$page.md)" "$root/README.md"
	check "README.zh-CN.md links to docs/zh-CN/$page.md" grep -qF "](docs/zh-CN/$page.md)" "$root/README.zh-CN.md"
	check "docs/$page.md and its translation link to each other" linked_both_ways "docs/$page.md" "zh-CN/$page.md" "docs/zh-CN/$page.md" "../$page.md"
	check "docs/$page.md and docs/zh-CN/$page.md have the same code blocks" same_code_blocks "docs/$page.md" "docs/zh-CN/$page.md"
done
check "README.md and README.zh-CN.md have the same code blocks" same_code_blocks README.md README.zh-CN.md

# same_events PAGE: the first column of PAGE's table of events ("| `name` |"
# rows under "| `event` |") is the list of src/base/log_events.h, in any order.
same_events() {
	diff -u <(grep -oE '^[[:space:]]*X\([A-Z_0-9]+, "[^"]+"\)' "$root/src/base/log_events.h" |
		sed -E 's/.*"([^"]+)".*/\1/' | sort) \
		<(awk '/^\| `event` \|/ { on = 1; next } on && !/^\|/ { on = 0 } on' "$root/$1" |
			sed -nE 's/^\| `([^`]+)` \|.*/\1/p' | sort)
}
check "docs/metrics.md lists every log event and no other" same_events docs/metrics.md
check "docs/zh-CN/metrics.md lists every log event and no other" same_events docs/zh-CN/metrics.md
check "README.md and README.zh-CN.md link to each other" linked_both_ways README.md README.zh-CN.md README.zh-CN.md README.md

"$plugin" --help >"$tmp/plugin-help"
if [[ -n $sim && -x $sim ]]; then
	"$sim" --help >"$tmp/sim-help" 2>&1 || true
else
	: >"$tmp/sim-help"
fi
version=$("$plugin" --version | awk '{print $2}')

# The per-file checks, in Perl: one "ok"/"FAIL"/"skip" line each.
cat >"$tmp/check.pl" <<'PERL'
use strict;
use warnings;
use utf8;
use File::Basename qw(dirname);
use Cwd qw(abs_path);
binmode STDOUT, ':encoding(UTF-8)';

my ($root, $plugin_help, $sim_help, @files) = @ARGV;
sub slurp { my ($f) = @_; open(my $h, '<:encoding(UTF-8)', $f) or die "$f: $!"; local $/; my $t = <$h>; close $h; return $t; }
sub rel { my ($f) = @_; (my $r = $f) =~ s{^\Q$root\E/}{}; return $r; }
sub result { my ($what, @problems) = @_; print @problems ? "FAIL $what: " . join('; ', @problems) . "\n" : "ok $what\n"; }

# Flags of each binary, from --help.
my %flags;
for ([plugin => $plugin_help], [sim => $sim_help]) {
	my ($bin, $file) = @$_;
	$flags{$bin} = { map { $_ => 1 } (slurp($file) =~ /^\s+--([a-z][a-z-]*)/mg) };
}
my $help_text = slurp($plugin_help);

# Log formats from src/: level -> [regex, ...]. The literal text of a format
# must match in full; each conversion matches only what it can print.
sub conversion_re {
	my ($flags, $width, $len, $conv) = @_;
	return '.' if $conv eq 'c';
	return '.*' if $conv eq 's';    # any text, possibly empty
	my $digits = $conv eq 'x' ? '[0-9a-f]' : $conv eq 'X' ? '[0-9A-F]' : '[0-9]';
	my $sign = $conv =~ /^[di]$/ ? '-?' : '';
	# A zero-padded width prints at least that many digits; a space-padded
	# one pads with blanks in front.
	return $flags =~ /0/ && $width ne '' ? "$sign$digits\{$width,}" : ($width ne '' && $flags !~ /-/ ? ' *' : '') . "$sign$digits+";
}
sub format_re {
	my ($fmt) = @_;
	my $re = '';
	for my $part (split /(%%|%[-0 +#]*[0-9]*(?:\.[0-9*]+)?(?:hh|ll|h|l|z|j|t)?[a-zA-Z])/, $fmt) {
		next if $part eq '';
		if ($part eq '%%') { $re .= '%'; next; }
		if ($part =~ /^%([-0 +#]*)([0-9]*)(?:\.[0-9*]+)?(hh|ll|h|l|z|j|t)?([sdiuxXc])$/) { $re .= conversion_re($1, $2, $3 // '', $4); next; }
		return undef if $part =~ /^%/;    # a conversion no quoted line can be checked against
		$re .= quotemeta($part);
	}
	return qr/^$re$/;
}
my %formats;
sub add_format {
	my ($level, $lits) = @_;
	my $fmt = join '', ($lits =~ /"((?:[^"\\]|\\.)*)"/g);
	$fmt =~ s/\\(["\\])/$1/g;
	my $re = format_re($fmt);
	push @{ $formats{$level} }, $re if $re;
}
for my $c (split /\n/, `find "$root/src" -name '*.c'`) {
	my $src = slurp($c);
	# log_msg_fields(LOG_LEVEL_WARN, &fields, "...") is a warn line too.
	while ($src =~ /\blog_(?:msg_fields\(\s*LOG_LEVEL_)?(error|warn|info|debug|ERROR|WARN|INFO|DEBUG)(?:\(|\s*,\s*[^,]+,)\s*((?:"(?:[^"\\]|\\.)*"\s*)+)/g) {
		add_format(lc $1, $2);
	}
	# So are log_event(LOG_LEVEL_WARN, LOG_EVENT_X, fields, "...") and the
	# logger's own format_linef(line, LOG_LEVEL_WARN, event, fields, "..."),
	# whose fields may be a compound literal with strings and commas: the
	# format is the first argument at the call's own depth that is a string.
	while ($src =~ /\b(?:log_event|format_linef)\((?=[^;]*?LOG_LEVEL_(ERROR|WARN|INFO|DEBUG))/g) {
		my ($level, $at) = (lc $1, pos($src));
		my ($depth, $start, $lits) = (0, 1, undef);
		while ($at < length $src) {
			my $rest = substr($src, $at);
			if ($rest =~ /^\s+/) { $at += $+[0]; next; }
			if ($rest =~ /^((?:"(?:[^"\\]|\\.)*"\s*)+)/) {
				if ($depth == 0 && $start) { $lits = $1; last; }
				$at += $+[0]; $start = 0; next;
			}
			my $c = substr($src, $at++, 1);
			if ($c =~ /[({]/) { $depth++; }
			elsif ($c =~ /[)}]/) { last if --$depth < 0; }
			elsif ($c eq ',' && $depth == 0) { $start = 1; next; }
			$start = 0;
		}
		add_format($level, $lits) if defined $lits;
	}
}

# GitHub's heading anchors.
sub anchors {
	my ($text) = @_;
	my %seen;
	my @out;
	$text =~ s/^```.*?^```//msg;
	for my $h ($text =~ /^#{1,6}\s+(.+?)\s*$/mg) {
		my $a = lc $h;
		$a =~ s/`//g;
		$a =~ s/[^\p{L}\p{M}\p{N}\p{Pc} -]//g;
		$a =~ s/ /-/g;
		my $n = $seen{$a}++;
		push @out, $n ? "$a-$n" : $a;
	}
	return map { $_ => 1 } @out;
}

# Flags used by commands in a piece of text.
sub command_flags {
	my ($line) = @_;
	my @found;
	# A binary run as a command: first word of a command (after a prompt,
	# sudo, exec, a pipe or a list dash), or named by its path.
	while ($line =~ m{(?:(?:^|[|;&(]|\bexec|\bsudo|^\s*-)\s*(?:\S*/)?|(?<![\w.-])/[\w./-]*/)(ascend-device-plugin|kubelet-sim)(?=[\s"',\]]|$)(.*)}g) {
		my ($bin, $rest) = ($1 eq 'kubelet-sim' ? 'sim' : 'plugin', $2);
		$rest =~ s/(?:\s#|\||;|&&).*//;
		push @found, map { [$bin, $_] } ($rest =~ /(?<![\w-])--([a-z][a-z-]*)/g);
	}
	# Container arguments shown as a YAML list item or a JSON value.
	push @found, map { ['plugin', $_] } ($line =~ /^\s*-\s+"?--([a-z][a-z-]*)/g);
	push @found, map { ['plugin', $_] } ($line =~ /"value"\s*:\s*"--([a-z][a-z-]*)/g);
	return @found;
}

my %anchor_cache;
for my $file (@files) {
	my $r = rel($file);
	my $text = slurp($file);
	my $dir = dirname($file);

	# Code blocks (with their info string) and the prose around them; a block
	# indented under a list item loses its indentation.
	my (@blocks, $prose);
	($prose = $text) =~ s/^([ \t]*)```(\S*)[^\n]*\n(.*?)^\1```[^\n]*$/my ($i, $info, $body) = ($1, $2, $3); $body =~ s{^\Q$i\E}{}mg; push @blocks, [$info, $body]; ''/msge;

	# Links.
	my @bad;
	(my $linkable = $prose) =~ s/`[^`\n]*`//g;
	for my $target ($linkable =~ /\]\(([^)\s]+)\)/g) {
		next if $target =~ /^(?:https?|mailto):/;
		my ($path, $anchor) = split /#/, $target, 2;
		my $dest = $path eq '' ? $file : "$dir/$path";
		if (!-e $dest) { push @bad, "$target: no such file"; next; }
		if (defined $anchor && $dest =~ /\.md$/) {
			my $key = abs_path($dest);
			$anchor_cache{$key} //= { anchors(slurp($dest)) };
			push @bad, "$target: no such heading" unless $anchor_cache{$key}{$anchor};
		}
	}
	result("$r: links resolve", @bad);

	# Flags of commands and arguments.
	my @uses;
	for my $b (@blocks) {
		my $code = $b->[1];
		$code =~ s/\\\n/ /g;                    # continued lines
		$code =~ s/\n(?=\s+\[?--)/ /g;          # a synopsis wrapped onto indented lines
		push @uses, command_flags($_) for split /\n/, $code;
	}
	push @uses, command_flags($_) for $prose =~ /`([^`\n]+)`/g;
	# The flag tables: rows whose first cell names flags.
	for my $cell ($prose =~ /^\|\s*(`--[^|]*)\|/mg) {
		push @uses, map { ['plugin', $_] } ($cell =~ /`--([a-z][a-z-]*)/g);
	}
	my @unknown = map { "--$_->[1] (" . ($_->[0] eq 'sim' ? 'kubelet-sim' : 'ascend-device-plugin') . ')' }
		grep { !$flags{ $_->[0] }{ $_->[1] } } @uses;
	my %u;
	@unknown = grep { !$u{$_}++ } @unknown;
	result("$r: commands use only existing flags (" . scalar(@uses) . " uses)", map { "$_ is not a flag" } @unknown);

	# Log lines.
	my @logs = map { grep { /\S/ } split /\n/, $_->[1] } grep { $_->[0] eq 'log' } @blocks;
	if (@logs) {
		my @nomatch;
		for my $l (@logs) {
			# `kubectl logs --prefix` puts [pod/NAME/CONTAINER] before each line.
			$l =~ s{^\[pod/[^/\]]+/[^/\]]+\] }{};
			# "%s %-5s " of a UTC time with milliseconds and the level.
			if ($l !~ /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (error|warn |info |debug) (.*)$/) { push @nomatch, "not a log line: $l"; next; }
			my ($level, $msg) = ($1, $2);
			$level =~ s/ +$//;
			push @nomatch, "no $level log call prints: $msg" unless grep { $msg =~ $_ } @{ $formats{$level} || [] };
		}
		result("$r: " . scalar(@logs) . " quoted log lines are ones the daemon prints", @nomatch);
	}

	# Paths into the repository.
	my @missing;
	my $all = join("\n", $prose, map { $_->[1] } @blocks);
	for my $p ($all =~ m{(?<![\w./-])((?:deploy|examples|docs|tests|scripts|src|tools)/[\w./-]*[\w/])(?![\w<])}g) {
		push @missing, $p unless -e "$root/$p";
	}
	my %m;
	result("$r: repository paths exist", grep { !$m{$_}++ } @missing);

	# The --help block of the configuration reference.
	if ($r =~ m{docs/(?:zh-CN/)?configuration\.md$}) {
		my ($block) = grep { $_->[1] =~ /^Usage: ascend-device-plugin/ } @blocks;
		result("$r: quotes --help exactly", !$block ? 'no block starting "Usage: ascend-device-plugin"' : $block->[1] eq $help_text ? () : 'the block differs from ascend-device-plugin --help');
		my %listed = map { $_ => 1 } map { /`--([a-z][a-z-]*)/g } ($prose =~ /^\|\s*(`--[^|]*)\|/mg);
		result("$r: the flag table lists every flag", map { "--$_ missing" } grep { !$listed{$_} } sort keys %{ $flags{plugin} });
	}
}
PERL
perl "$tmp/check.pl" "$root" "$tmp/plugin-help" "$tmp/sim-help" "${files[@]}" >"$tmp/checks" 2>&1 || echo "FAIL check.pl: exited with $?" >>"$tmp/checks"
cat "$tmp/checks"
passed=$((passed + $(grep -c '^ok ' "$tmp/checks" || true)))
failed=$((failed + $(grep -c '^FAIL ' "$tmp/checks" || true)))

# Facts the docs repeat from the manifests.
manifest=$root/deploy/base/ascend-device-plugin.yaml
selectors_match() {
	local bad
	bad=$(grep -ho -- '-l name=[A-Za-z0-9.-]*' "${files[@]}" | sort -u | grep -vx -- '-l name=ascend-device-plugin' || true)
	[[ -z $bad ]] || { echo "selectors that match no plugin pod: $bad"; return 1; }
	grep -q '^        name: ascend-device-plugin$' "$manifest" || { echo "the manifest's pod label changed"; return 1; }
}
check "label selectors in the docs select the plugin's pods" selectors_match
tags_match() {
	local bad
	bad=$(grep -ho 'ascend-device-plugin:[0-9][0-9A-Za-z.-]*' "${files[@]}" | sort -u | grep -vx "ascend-device-plugin:$version" || true)
	[[ -z $bad ]] || { echo "image tags other than $version: $bad"; return 1; }
}
check "image tags in the docs are the current version $version" tags_match
figures_match() {
	local value doc
	for value in "cpu: 10m" "memory: 16Mi" "memory: 64Mi"; do
		grep -q "^ *${value}$" "$manifest" || { echo "the manifest no longer has '$value': update the docs"; return 1; }
		for doc in "$root/docs/install.md" "$root/docs/zh-CN/install.md" "$root/docs/configuration.md" "$root/docs/zh-CN/configuration.md"; do
			grep -qF "$value" "$doc" || { echo "${doc#"$root"/} does not say '$value'"; return 1; }
		done
	done
}
check "the resource figures in the docs are the manifest's" figures_match

# The licence.
license_is_apache() {
	[[ -f $root/LICENSE ]] || { echo "no LICENSE"; return 1; }
	grep -q 'Apache License' "$root/LICENSE" && grep -q 'Version 2.0, January 2004' "$root/LICENSE" &&
		grep -q 'END OF TERMS AND CONDITIONS' "$root/LICENSE" || { echo "LICENSE is not the full Apache License 2.0"; return 1; }
}
check "LICENSE is the full Apache License 2.0" license_is_apache

# Every source, script, build file and manifest names its licence in its
# first lines (SPDX), so a file copied out of the tree still says it.
spdx_everywhere() {
	local f missing=0
	while IFS= read -r f; do
		head -n 3 "$root/$f" | grep -q 'SPDX-License-Identifier: Apache-2.0' || { echo "no SPDX line: $f"; missing=1; }
	done < <(git -C "$root" ls-files | grep -E '\.(c|h|sh|cjs|proto|cmake|yaml|supp)$|(^|/)(CMakeLists\.txt|Makefile|Dockerfile)$|^\.ci/run$' |
		grep -v '^fuzz/corpus/')
	return $missing
}
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
	check "every source file carries an SPDX line" spdx_everywhere
else
	skip "every source file carries an SPDX line" "not a git checkout"
fi
check "README.md links to LICENSE" grep -qF '](LICENSE)' "$root/README.md"
check "README.zh-CN.md links to LICENSE" grep -qF '](LICENSE)' "$root/README.zh-CN.md"

# Nothing cites what is not in the repository. The patterns are split so that
# this file does not match itself.
outside_refs() {
	local hits
	hits=$(find "$root" \( -name .git -o -name 'build*' -o -name node_modules \) -prune -o -type f \
		\( -name '*.md' -o -name '*.[ch]' -o -name '*.sh' -o -name '*.yaml' -o -name '*.cjs' -o -name '*.py' \
		-o -name '*.proto' -o -name '*.txt' -o -name '*.cmake' -o -name Dockerfile -o -name Makefile -o -name LICENSE \) -print0 |
		xargs -0 grep -nIE -e '\.\./'"shared" -e '/work/'"shared" -e 'ascend-'"facts" -e '\bthe '"lead\b" 2>/dev/null |
		sed "s#^$root/##" || true)
	[[ -z $hits ]] || { echo "cites a file outside the repository or internal process:"; echo "$hits" | head -20; return 1; }
}
check "no file cites a path outside the repository (shared/, the facts file) or internal process" outside_refs

# The "your own overlay" example of configuration.md renders as it says.
own_overlay() { # doc
	local dir
	dir=$(mktemp -d "$tmp/own.XXXX")
	ln -s "$root" "$dir/ascend-k8s"
	mkdir "$dir/my-cluster"
	awk '/^# my-cluster\/kustomization.yaml/{on=1} on&&/^```/{exit} on' "$1" >"$dir/my-cluster/kustomization.yaml"
	[[ -s $dir/my-cluster/kustomization.yaml ]] || { echo "no '# my-cluster/kustomization.yaml' block"; return 1; }
	kubectl kustomize "$dir/my-cluster" >"$dir/out.yaml"
	grep -q "image: registry.example.com/ascend/ascend-device-plugin:$version" "$dir/out.yaml" || { echo "the new image is not in the render"; return 1; }
	grep -q 'path: /opt/Ascend/driver' "$dir/out.yaml" || { echo "the driver path is not in the render"; return 1; }
}
for doc in docs/configuration.md docs/zh-CN/configuration.md; do
	if command -v kubectl >/dev/null; then
		check "$doc: the 'your own overlay' example renders" own_overlay "$root/$doc"
	else
		skip "$doc: the 'your own overlay' example renders" "no kubectl"
	fi
done

# doc_block DOC NAME: the code block of DOC whose first line is "# NAME",
# without the indentation of a list item.
doc_block() {
	awk -v name="# $2" '
		!on { line = $0; sub(/^[ \t]*/, "", line); if (line == name) { on = 1; ind = length($0) - length(line) } }
		on && /^[ \t]*```/ { exit }
		on { print substr($0, ind + 1) }' "$1"
}
# The side-by-side example of migration.md: its kustomization renders over
# deploy/ and gives the DaemonSet both labels in its nodeSelector, and its
# NotIn patch for Huawei's DaemonSet is a strategic-merge patch a DaemonSet
# takes (ours stands in for Huawei's).
split_by_label() { # doc
	local dir patch
	dir=$(mktemp -d "$tmp/split.XXXX")
	ln -s "$root" "$dir/ascend-k8s"
	mkdir "$dir/my-cluster"
	doc_block "$1" my-cluster/kustomization.yaml >"$dir/my-cluster/kustomization.yaml"
	doc_block "$1" my-cluster/plugin-nodes.yaml >"$dir/my-cluster/plugin-nodes.yaml"
	[[ -s $dir/my-cluster/kustomization.yaml && -s $dir/my-cluster/plugin-nodes.yaml ]] ||
		{ echo "no '# my-cluster/kustomization.yaml' and '# my-cluster/plugin-nodes.yaml' blocks"; return 1; }
	kubectl kustomize "$dir/my-cluster" >"$dir/out.yaml" 2>"$dir/err" || { cat "$dir/err"; return 1; }
	awk '/^      nodeSelector:$/ { on = 1; next } on && /^        / { print; next } on { exit }' "$dir/out.yaml" >"$dir/selector"
	grep -qx '        npu: "true"' "$dir/selector" && grep -qx '        ascend-k8s/plugin: ascend-k8s' "$dir/selector" ||
		{ echo "the rendered nodeSelector is not npu and ascend-k8s/plugin:"; cat "$dir/selector"; return 1; }
	patch=$(grep -o "patch daemonset <huawei-daemonset> --type=strategic -p '[^']*'" "$1" | sed "s/.* -p '//; s/'\$//")
	[[ -n $patch ]] || { echo "no NotIn patch for Huawei's DaemonSet"; return 1; }
	kubectl patch --local -f "$manifest" --type=strategic -p "$patch" -o yaml >"$dir/huawei.yaml" 2>"$dir/err" ||
		{ cat "$dir/err"; return 1; }
	grep -A3 -- '- key: ascend-k8s/plugin' "$dir/huawei.yaml" | grep -q 'operator: NotIn' ||
		{ echo "the patch gives no NotIn rule on ascend-k8s/plugin"; return 1; }
}
# Its ascend-runtime lines, added to that kustomization, render too and put
# the strategy at the end of the plugin's arguments, with Huawei's resource
# name as well.
ascend_runtime_patch() { # doc
	local dir base
	dir=$(mktemp -d "$tmp/runtime.XXXX")
	ln -s "$root" "$dir/ascend-k8s"
	mkdir "$dir/my-cluster"
	{
		doc_block "$1" my-cluster/kustomization.yaml
		doc_block "$1" "added to my-cluster/kustomization.yaml" | tail -n +2
	} >"$dir/my-cluster/kustomization.yaml"
	doc_block "$1" my-cluster/plugin-nodes.yaml >"$dir/my-cluster/plugin-nodes.yaml"
	doc_block "$1" my-cluster/ascend-runtime.yaml >"$dir/my-cluster/ascend-runtime.yaml"
	[[ -s $dir/my-cluster/ascend-runtime.yaml ]] && grep -q patchesJson6902 "$dir/my-cluster/kustomization.yaml" ||
		{ echo "no '# added to my-cluster/kustomization.yaml' and '# my-cluster/ascend-runtime.yaml' blocks"; return 1; }
	for base in deploy deploy/overlays/resource-name; do
		sed -i "s#^  - ../ascend-k8s/deploy.*#  - ../ascend-k8s/$base#" "$dir/my-cluster/kustomization.yaml"
		kubectl kustomize "$dir/my-cluster" >"$dir/out.yaml" 2>"$dir/err" || { cat "$dir/err"; return 1; }
		awk '/^      - args:$/ { on = 1; next } on && /^        - / { last = $0; next } on { exit } END { print last }' \
			"$dir/out.yaml" | grep -qx -- '        - --device-list-strategy=ascend-runtime' ||
			{ echo "over $base the last argument is not --device-list-strategy=ascend-runtime"; return 1; }
	done
}
for doc in docs/migration.md docs/zh-CN/migration.md; do
	if command -v kubectl >/dev/null; then
		check "$doc: the side-by-side kustomization and patch render" split_by_label "$root/$doc"
		check "$doc: the ascend-runtime patch renders over the side-by-side kustomization" ascend_runtime_patch "$root/$doc"
	else
		skip "$doc: the side-by-side kustomization and patch render" "no kubectl"
		skip "$doc: the ascend-runtime patch renders over the side-by-side kustomization" "no kubectl"
	fi
done

# synopsis_lists_every_flag README: its ```-block synopsis of the daemon
# names each flag --help lists.
synopsis_lists_every_flag() {
	local synopsis missing=""
	synopsis=$(awk '/^ascend-device-plugin \[/ { on = 1 } on && /^```/ { exit } on' "$1")
	for flag in $("$plugin" --help | sed -n 's/^  \(--[a-z-]*\).*/\1/p'); do
		grep -qE -- "\[$flag( |\])" <<<"$synopsis" || missing+=" $flag"
	done
	[ -z "$missing" ] || { echo "not in the synopsis:$missing"; return 1; }
}
check "README.md: the daemon's synopsis names every flag of --help" synopsis_lists_every_flag "$root/README.md"
check "README.zh-CN.md: the daemon's synopsis names every flag of --help" synopsis_lists_every_flag "$root/README.zh-CN.md"

# Claims that something is missing, with what in the tree says it is there:
# "PATTERN (an extended regex over the pages) => FILE or FILE:STRING (the
# code that contradicts it)". A page still making the claim fails.
stale_claims=(
	"faultCode\.json.{0,20} (are|is) not read => src/fault/huawei.c:faultCode.json"
	"faultCode\.json.{0,40}不会被读取 => src/fault/huawei.c:faultCode.json"
	"SIGHUP[^.]*registers every resource again => src/plugin/session.c:A bound endpoint keeps its registration"
	"no surge: two => deploy/base/ascend-device-plugin.yaml:maxSurge: 1"
)
no_stale_claims() {
	local entry pattern proof file needle hits
	for entry in "${stale_claims[@]}"; do
		pattern=${entry%% => *} proof=${entry#* => }
		file=${proof%%:*} needle=${proof#*:}
		[ "$needle" = "$proof" ] && needle=''
		[ -e "$root/$file" ] && { [ -z "$needle" ] || grep -qF -- "$needle" "$root/$file"; } || continue
		hits=$(cd "$root" && grep -rnE -- "$pattern" README.md README.zh-CN.md docs) &&
			{ echo "says what $proof contradicts: $hits"; return 1; }
	done
	return 0
}
check "no page claims something missing that the code has" no_stale_claims

finish
