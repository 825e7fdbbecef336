# Every SQL block of README.md, in order, in one fresh database of a server
# with the library preloaded: a block may raise an error only if it shows it
# (its text holds the error's message, e.g. in a comment "-- ERROR:  ...").
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use Test::More;

my $readme = 'README.md';
open(my $fh, '<', $readme) or die "cannot read $readme: $!";
my @lines = <$fh>;
close($fh);

# ```sql ... ``` blocks, also indented ones (in list items)
my @blocks;
my ($indent, $block, $start);
for my $i (0 .. $#lines)
{
	my $line = $lines[$i];
	if (!defined $block)
	{
		if ($line =~ /^(\s*)```sql\s*$/)
		{
			($indent, $block, $start) = ($1, '', $i + 1);
		}
		next;
	}
	if ($line =~ /^\s*```\s*$/)
	{
		push @blocks, { line => $start, sql => $block };
		undef $block;
		next;
	}
	$line =~ s/^\Q$indent\E//;
	$block .= $line;
}
ok(!defined $block, 'every SQL block of the README is closed');
cmp_ok(scalar @blocks, '>=', 5, 'the README has SQL blocks (' . scalar(@blocks) . ')');

my $node = PostgreSQL::Test::Cluster->new('readme');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'bloomfilter'\n");
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE readme');

for my $b (@blocks)
{
	my ($stdout, $stderr);
	$node->psql('readme', $b->{sql},
		stdout => \$stdout, stderr => \$stderr,
		on_error_stop => 0, extra_params => ['-X']);
	my @unexpected;
	for my $err ($stderr =~ /ERROR:\s+(.*)$/mg)
	{
		push @unexpected, $err unless index($b->{sql}, $err) >= 0;
	}
	ok(!@unexpected,
		"README.md line $b->{line}: the block runs"
		  . (@unexpected ? ": unexpected error: $unexpected[0]" : ''));
}

$node->stop;
done_testing();
