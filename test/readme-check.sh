#!/usr/bin/env bash
# Static checks of the documentation (no server), from the repository root:
#  1. every SQL object of sql/bloomfilter--1.1.sql and of the update to 2.0
#     (sql/bloomfilter--1.1--2.0.sql) a user may meet, and that the update
#     does not drop, is documented in the reference, doc/reference.md:
#     functions (all but the types' I/O functions), aggregates, types,
#     operators (in backquotes), casts (both types), operator classes,
#     tables, views, event triggers, and every GUC the C code defines (the
#     README may name them too; the reference must);
#  2. in README.md, CHANGELOG.md, test/README.md and every doc/*.md, every
#     link to an anchor (#x, file.md#x) resolves to a heading of that file,
#     with GitHub's rule for heading anchors;
#  3. in the same files, every relative file link points to an existing file;
#  4. README.md is at most 3,500 words, counted as `wc -w` counts them.
# Prints each problem and "readme-check: N problems" last; exits non-zero on any.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

exec perl -x "$0" "$@"
#!perl
use strict;
use warnings;

my $problems = 0;
sub problem { print "$_[0]\n"; $problems++; }

sub slurp
{
	my ($f) = @_;
	open(my $fh, '<', $f) or die "cannot read $f: $!";
	local $/;
	my $text = <$fh>;
	close($fh);
	return $text;
}

my $reference_file = 'doc/reference.md';
my $readme = slurp($reference_file);
my $sql = slurp('sql/bloomfilter--1.1.sql') . slurp('sql/bloomfilter--1.1--2.0.sql');
$sql =~ s/--[^\n]*//g;

# ---- 1. objects
my %io;
while ($sql =~ /CREATE TYPE\s+\w+\s*\((.*?)\);/sg)
{
	my $def = $1;
	$io{lc $1} = 1 while $def =~ /\b(?:INPUT|OUTPUT|RECEIVE|SEND)\s*=\s*(\w+)/ig;
}
my %named;
while ($sql =~ /CREATE\s+(FUNCTION|AGGREGATE|TYPE|TABLE|VIEW|EVENT TRIGGER|OPERATOR CLASS)\s+(\w+)/ig)
{
	my ($kind, $name) = (uc $1, lc $2);
	next if $kind eq 'FUNCTION' && $io{$name};
	$named{"$kind $name"} = $name;
}
# what the update to 2.0 drops (a dropped overload drops the name only if
# every overload is dropped: those kept are also re-created or ALTERed)
while ($sql =~ /DROP\s+(FUNCTION|TABLE|VIEW|EVENT TRIGGER)\s+(\w+)/ig)
{
	my ($kind, $name) = (uc $1, lc $2);
	delete $named{"$kind $name"} unless $sql =~ /ALTER\s+FUNCTION\s+$name\b/i && $kind eq 'FUNCTION';
}
for my $obj (sort keys %named)
{
	my $name = $named{$obj};
	problem("not in $reference_file: $obj") unless $readme =~ /\b\Q$name\E\b/;
}

my %ops;
$ops{$1} = 1 while $sql =~ /CREATE OPERATOR\s+([^\s\w(]+)\s*\(/g;
for my $op (sort keys %ops)
{
	(my $escaped = $op) =~ s/\|/\\|/g;
	my $found = 0;
	for my $form ($op, $escaped)
	{
		$found = 1 if $readme =~ /`(?:[^`\n]*\s)?\Q$form\E(?:\s[^`\n]*)?`/;
	}
	problem("operator not in $reference_file (in backquotes): $op") unless $found;
}

while ($sql =~ /CREATE CAST\s*\(\s*(\w+)\s+AS\s+(\w+)\s*\)/ig)
{
	my ($from, $to) = (lc $1, lc $2);
	problem("cast ($from AS $to): a type not in $reference_file")
	  unless $readme =~ /\b\Q$from\E\b/ && $readme =~ /\b\Q$to\E\b/;
}
problem("$reference_file never mentions casts") unless $readme =~ /\bcasts?\b/;

for my $c (glob('src/*.c src/*/*.c src/*/*/*.c'))
{
	my $code = slurp($c);
	while ($code =~ /DefineCustom\w+Variable\(\s*"([\w.]+)"/g)
	{
		problem("GUC not in $reference_file: $1") unless $readme =~ /\Q$1\E/;
	}
}

# ---- 2, 3. links
my %anchors;
sub anchors_of
{
	my ($file) = @_;
	return $anchors{$file} if $anchors{$file};
	my (%seen, %set);
	my $in_code = 0;
	for my $line (split /\n/, slurp($file))
	{
		$in_code = !$in_code if $line =~ /^\s*```/;
		next if $in_code || $line !~ /^#{1,6}\s+(.*?)\s*$/;
		my $a = lc $1;
		$a =~ s/[^\w\- ]//g;
		$a =~ s/ /-/g;
		my $n = $seen{$a}++;
		$set{$n ? "$a-$n" : $a} = 1;
	}
	return $anchors{$file} = \%set;
}

for my $file ('README.md', 'CHANGELOG.md', 'test/README.md', sort glob('doc/*.md'))
{
	(my $dir = $file) =~ s{[^/]*$}{};
	my $text = slurp($file);
	$text =~ s/^\s*```.*?^\s*```//msg;
	while ($text =~ /\]\(([^)\s]+)\)/g)
	{
		my $link = $1;
		next if $link =~ m{^[a-z]+://};
		my ($path, $anchor) = $link =~ /^([^#]*)(?:#(.*))?$/;
		my $target = $path eq '' ? $file : "$dir$path";
		$target =~ s{^\./}{};
		1 while $target =~ s{[^/]+/\.\./}{};
		if (!-e $target)
		{
			problem("$file: link to a missing file: $link");
			next;
		}
		next unless defined $anchor;
		problem("$file: link to a missing anchor: $link")
		  unless $target =~ /\.md$/ && anchors_of($target)->{$anchor};
	}
}

# ---- 4. the README's length (wc -w: runs of non-blank characters)
my $max_words = 3500;
my @words = split ' ', slurp('README.md');
problem(sprintf('README.md: %d words, more than %d', scalar(@words), $max_words))
  if @words > $max_words;

print "readme-check: $problems problems\n";
exit($problems ? 1 : 0);
