# A minimal client of PostgreSQL's frontend/backend protocol (version 3) for
# what psql cannot do: run a query in a named portal of the extended
# protocol a few rows at a time, the way drivers fetch, and keep the portal
# open for later statements of the transaction (WHERE CURRENT OF).
#
#   my $c = PgWire->connect($node, 'postgres');
#   $c->query('BEGIN');
#   my $r = $c->portal('p', 'SELECT ...', 2);  # {rows => [...], suspended => 1}
#   $r = $c->query('UPDATE t ... WHERE CURRENT OF p RETURNING id');
#   # {rows => [[...], ...], error => 'SQLSTATE: message' or undef}
#
# Trust authentication only (what PostgreSQL::Test::Cluster sets up for its
# Unix socket); values in text form.
package PgWire;

use strict;
use warnings;
use IO::Socket::UNIX;
use Socket qw(SOCK_STREAM);

sub connect
{
	my ($class, $node, $dbname) = @_;
	my $path = $node->host . '/.s.PGSQL.' . $node->port;
	my $sock = IO::Socket::UNIX->new(Type => SOCK_STREAM, Peer => $path)
	  or die "cannot connect to $path: $!";
	my $self = bless { sock => $sock }, $class;
	my $body = pack('N', 196608) . join('', map { "$_\0" }
		  ('user', scalar getpwuid($<), 'database', $dbname)) . "\0";
	$sock->print(pack('N', 4 + length $body) . $body);
	my $r = $self->_until_ready;
	die "startup failed: $r->{error}" if defined $r->{error};
	return $self;
}

# A simple query: its rows and its error, if any.
sub query
{
	my ($self, $sql) = @_;
	$self->_send('Q', "$sql\0");
	return $self->_until_ready;
}

# Parse, bind into portal $name and execute it for $max rows, then Sync.
sub portal
{
	my ($self, $name, $sql, $max) = @_;
	$self->_send('P', "\0$sql\0" . pack('n', 0));
	$self->_send('B', "$name\0\0" . pack('nnn', 0, 0, 0));
	$self->_send('E', "$name\0" . pack('N', $max));
	$self->_send('S', '');
	return $self->_until_ready;
}

# Execute an open portal for $max more rows.
sub fetch
{
	my ($self, $name, $max) = @_;
	$self->_send('E', "$name\0" . pack('N', $max));
	$self->_send('S', '');
	return $self->_until_ready;
}

sub close
{
	my ($self) = @_;
	$self->_send('X', '');
	$self->{sock}->close;
}

sub _send
{
	my ($self, $type, $body) = @_;
	$self->{sock}->print($type . pack('N', 4 + length $body) . $body);
}

sub _read
{
	my ($self, $n) = @_;
	my $buf = '';
	while (length $buf < $n)
	{
		my $got = $self->{sock}->sysread($buf, $n - length $buf, length $buf);
		die "connection closed" unless $got;
	}
	return $buf;
}

# Messages until ReadyForQuery: data rows, suspension, the first error.
sub _until_ready
{
	my ($self) = @_;
	my %r = (rows => [], suspended => 0, error => undef);
	for (;;)
	{
		my ($type, $len) = unpack('aN', $self->_read(5));
		my $body = $len > 4 ? $self->_read($len - 4) : '';
		if ($type eq 'D')
		{
			my $n = unpack('n', $body);
			my $at = 2;
			my @row;
			for (1 .. $n)
			{
				my $l = unpack('l>', substr($body, $at, 4));
				$at += 4;
				push @row, $l < 0 ? undef : substr($body, $at, $l);
				$at += $l if $l > 0;
			}
			push @{ $r{rows} }, \@row;
		}
		elsif ($type eq 's')
		{
			$r{suspended} = 1;
		}
		elsif ($type eq 'E' && !defined $r{error})
		{
			my %f = map { substr($_, 0, 1) => substr($_, 1) } split /\0/, $body;
			$r{error} = "$f{C}: $f{M}";
		}
		elsif ($type eq 'R' && unpack('N', $body) != 0)
		{
			die 'PgWire: only trust authentication is supported';
		}
		elsif ($type eq 'Z')
		{
			return \%r;
		}
	}
}

1;
