#!/usr/bin/env bash
# Static check of the source tree's layering (no server, no compiler), from
# the repository root.  The folders of src/, lowest first:
#
#	core < value < cache < index < plan < src/bloomfilter.c
#
# and a file calls only its own folder and those below it.  The includes say
# what a file may call, so for every .c and .h under src/ and each of its
# #include lines:
#  1. a quoted include of the project names its folder ("value/bf_value.h"):
#     the Makefile searches src/ only, and the folder of every include is
#     visible;
#  2. it is of the file's own folder or of one below it, never above;
#  3. of another folder, it is that folder's one public header:
#     core/bf_core.h, value/bf_value.h, cache/bf_cache.h, index/bf_index.h,
#     plan/bf_plan.h;
#  4. in src/core/, nothing of PostgreSQL (postgres.h, fmgr.h, utils/...,
#     access/...; any quoted include not of the core): only C standard
#     headers and <xxhash.h> in angle brackets, and the core's own headers;
#  5. in src/core/, the files have an order too (@core_order below, each
#     including only headers of itself and the files before it), so that
#     the core has no circle either.
# Prints file:line and the include for each problem, "layering: N problems"
# last; exits non-zero on any.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

perl - <<'PERL'
use strict;
use warnings;

my @folders = qw(core value cache index plan);
my %rank;
@rank{@folders} = (0 .. $#folders);
my $top = scalar @folders;    # src/bloomfilter.c: above every folder
my %public = map { $_ => "$_/bf_$_.h" } @folders;

# The core's files, lowest first (a file's .c and .h share its name;
# bf_cuckoo_text.c is bf_cuckoo's second file).  A new core file must be
# given its place here.
my @core_order = qw(bf_format bf_hash bf_counting bf_sizing bf_layout
  bf_scalable bf_text bf_cuckoo bf_core);
my %core_rank;
@core_rank{@core_order} = (0 .. $#core_order);
my %core_alias = (bf_cuckoo_text => 'bf_cuckoo');

# What the core may include in angle brackets: C99/C11 headers, and xxHash
# (header only, see core/bf_hash.h).
my %c_std = map { $_ => 1 } qw(assert.h complex.h ctype.h errno.h fenv.h
  float.h inttypes.h iso646.h limits.h locale.h math.h setjmp.h signal.h
  stdalign.h stdarg.h stdatomic.h stdbool.h stddef.h stdint.h stdio.h
  stdlib.h stdnoreturn.h string.h tgmath.h threads.h time.h uchar.h
  wchar.h wctype.h xxhash.h);

my $problems = 0;
my $files = 0;
sub problem { print "$_[0]\n"; $problems++; }

sub core_unit
{
	my ($name) = @_;
	$name =~ s{^.*/}{};
	$name =~ s{\.[ch]$}{};
	return $core_alias{$name} // $name;
}

my @sources = sort(glob('src/*.[ch]'), glob('src/*/*.[ch]'));
die "layering: no sources under src/ (run from the repository)\n" unless @sources;
for my $file (@sources)
{
	my ($folder) = $file =~ m{^src/([^/]+)/[^/]+$};
	my $myrank;
	if (!defined $folder)
	{
		$folder = '(top)';
		$myrank = $top;
	}
	elsif (!exists $rank{$folder})
	{
		problem("$file: folder src/$folder/ has no place in the order (@folders)");
		next;
	}
	else
	{
		$myrank = $rank{$folder};
	}
	$files++;

	open(my $fh, '<', $file) or die "cannot read $file: $!";
	while (my $line = <$fh>)
	{
		next unless $line =~ /^\s*#\s*include\s*([<"])([^">]+)[">]/;
		my ($delim, $inc) = ($1, $2);
		my $where = "$file:$.";
		chomp(my $text = $line);
		$text =~ s/^\s+//;

		if ($delim eq '<')
		{
			problem("$where: $text: the core includes only C standard headers and <xxhash.h>")
			  if $folder eq 'core' && !$c_std{$inc};
			next;
		}

		my ($incfolder) = $inc =~ m{^([^/]+)/};
		if (!defined $incfolder || !exists $rank{$incfolder})
		{
			# not the project's, as written: a header of PostgreSQL, unless
			# it names one of ours without its folder
			if (-e "src/$inc" || grep { -e "src/$_/$inc" } @folders)
			{
				problem("$where: $text: name the folder of the project's headers (\"folder/$inc\")");
			}
			elsif ($folder eq 'core')
			{
				problem("$where: $text: a PostgreSQL (or other non-core) include in src/core/");
			}
			next;
		}

		if (!-e "src/$inc")
		{
			problem("$where: $text: no such file src/$inc");
			next;
		}
		if ($rank{$incfolder} > $myrank)
		{
			problem("$where: $text: an upward include ($incfolder/ is above "
				  . ($folder eq '(top)' ? 'src/' : "$folder/") . " in @folders)");
			next;
		}
		if ($incfolder ne $folder && $inc ne $public{$incfolder})
		{
			problem("$where: $text: from another folder include only $public{$incfolder}");
			next;
		}
		if ($folder eq 'core')
		{
			my ($mine, $theirs) = (core_unit($file), core_unit($inc));
			for my $u ($mine, $theirs)
			{
				problem("$where: $text: $u has no place in test/layering.sh's \@core_order")
				  unless exists $core_rank{$u};
			}
			next unless exists $core_rank{$mine} && exists $core_rank{$theirs};
			problem("$where: $text: $theirs comes after $mine in the core's order (@core_order)")
			  if $core_rank{$theirs} > $core_rank{$mine};
		}
	}
	close($fh);
}

print "layering: $files files, $problems problems\n";
exit($problems ? 1 : 0);
PERL
