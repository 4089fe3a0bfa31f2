/*
 * The floor of SSE fan-out on this machine (`fanout_capacity`, bench/README.md "The C floor"): one
 * process, one thread, epoll, non-blocking sockets, libc only. It answers any HTTP/1.1 request on
 * 127.0.0.1 with a chunked SSE response, the headers and opening frames of the bare node:http server
 * (sse-frame-server.ts), and keeps the socket. The bench drives it over stdin, one command a line:
 *
 *   publish <json>   writes the chunk "event: live-notification\ndata: <json>\n\n", built once, to
 *                    every open response (the bench makes <json> with fanoutCloudEvent, so the frames
 *                    are the bare server's bytes). Publishes read from stdin at once (the bench got
 *                    ahead of the floor) go out together, one write per client, as a Node server's
 *                    writes to a socket coalesce once it falls behind; one at a time, one write each.
 *   count            answers "clients <n>\n" on stdout: the responses it holds
 *
 * and it prints "ready <port>\n" once it listens. End of stdin ends it.
 *
 * A socket that does not take a whole frame keeps the rest in its own buffer and gets it when it is
 * writable again, ahead of later frames; a client whose unsent bytes would pass OUTPUT_LIMIT is
 * closed (the bench sees a stream that ended). Nothing else is done per frame: no parsing, no timer,
 * no copy besides that buffer.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_HEAD_BYTES (64 * 1024)
#define MAX_BODY_BYTES (1024 * 1024)
#define OUTPUT_LIMIT (1024 * 1024)
#define MAX_COMMAND_BYTES (1024 * 1024)
#define EVENTS_PER_WAIT 1024
/* epoll data of the two descriptors that are not clients; a client's carries its generation too. */
#define LISTENER_TAG UINT64_MAX
#define COMMANDS_TAG (UINT64_MAX - 1)

static const char TOPIC[] = "extreme_event.north.1200.*.*";
static const char FRAME_HEAD[] = "event: live-notification\ndata: ";
static const char FRAME_TAIL[] = "\n\n";

struct buffer {
  char *bytes;
  size_t length;
  size_t capacity;
};

struct client {
  int fd;
  uint32_t generation;
  /* Position in `streams`, or -1 while the request is still being read. */
  long slot;
  /* The request so far (head, then body), freed once the response starts. */
  struct buffer request;
  size_t head_length;
  size_t body_length;
  /* Bytes the socket did not take yet, in order. */
  struct buffer unsent;
  int waiting_for_writable;
};

static int epoll_fd;
static struct client **clients_by_fd;
static size_t max_fds;
static int *streams;
static size_t stream_count;
static uint32_t next_generation = 1;
static uint64_t random_state;

static void die(const char *what) {
  fprintf(stderr, "c-fanout-server: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void *checked_realloc(void *pointer, size_t size) {
  void *grown = realloc(pointer, size);
  if (grown == NULL) die("out of memory");
  return grown;
}

static void append(struct buffer *buffer, const char *bytes, size_t length) {
  if (buffer->length + length > buffer->capacity) {
    size_t capacity = buffer->capacity == 0 ? 4096 : buffer->capacity;
    while (capacity < buffer->length + length) capacity *= 2;
    buffer->bytes = checked_realloc(buffer->bytes, capacity);
    buffer->capacity = capacity;
  }
  memcpy(buffer->bytes + buffer->length, bytes, length);
  buffer->length += length;
}

/* Forgets the first `count` bytes. */
static void drop_front(struct buffer *buffer, size_t count) {
  memmove(buffer->bytes, buffer->bytes + count, buffer->length - count);
  buffer->length -= count;
}

static void release(struct buffer *buffer) {
  free(buffer->bytes);
  buffer->bytes = NULL;
  buffer->length = 0;
  buffer->capacity = 0;
}

static uint64_t client_tag(const struct client *client) {
  return ((uint64_t)client->generation << 32) | (uint32_t)client->fd;
}

static void watch(struct client *client, int op, uint32_t events) {
  struct epoll_event event = {.events = events, .data.u64 = client_tag(client)};
  if (epoll_ctl(epoll_fd, op, client->fd, &event) < 0) die("epoll_ctl");
}

static void close_client(struct client *client) {
  if (client->slot >= 0) {
    /* The last stream takes the closed one's place. */
    int moved = streams[--stream_count];
    streams[client->slot] = moved;
    clients_by_fd[moved]->slot = client->slot;
  }
  clients_by_fd[client->fd] = NULL;
  close(client->fd);
  release(&client->request);
  release(&client->unsent);
  free(client);
}

/*
 * Hands `bytes` to the client's socket behind whatever it has not taken yet. Returns 0, or -1 when
 * the client was closed (the socket failed, or it would hold more than OUTPUT_LIMIT unsent bytes).
 */
static int send_bytes(struct client *client, const char *bytes, size_t length) {
  if (client->unsent.length == 0) {
    ssize_t written = write(client->fd, bytes, length);
    if (written < 0) {
      if (errno != EAGAIN && errno != EINTR) {
        close_client(client);
        return -1;
      }
      written = 0;
    }
    if ((size_t)written == length) return 0;
    bytes += written;
    length -= (size_t)written;
  }
  if (client->unsent.length + length > OUTPUT_LIMIT) {
    close_client(client);
    return -1;
  }
  append(&client->unsent, bytes, length);
  if (!client->waiting_for_writable) {
    client->waiting_for_writable = 1;
    watch(client, EPOLL_CTL_MOD, EPOLLIN | EPOLLRDHUP | EPOLLOUT);
  }
  return 0;
}

static void flush_unsent(struct client *client) {
  size_t sent = 0;
  while (sent < client->unsent.length) {
    ssize_t written = write(client->fd, client->unsent.bytes + sent, client->unsent.length - sent);
    if (written < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) {
        close_client(client);
        return;
      }
      drop_front(&client->unsent, sent);
      return;
    }
    sent += (size_t)written;
  }
  client->unsent.length = 0;
  client->waiting_for_writable = 0;
  watch(client, EPOLL_CTL_MOD, EPOLLIN | EPOLLRDHUP);
}

static uint64_t next_random(void) {
  /* xorshift64: request ids need only look like the bare server's UUIDs. */
  random_state ^= random_state << 13;
  random_state ^= random_state >> 7;
  random_state ^= random_state << 17;
  return random_state;
}

static void request_id(char out[37]) {
  uint64_t high = next_random();
  uint64_t low = next_random();
  snprintf(out, 37, "%08x-%04x-4%03x-%04x-%012llx", (unsigned)(high >> 32), (unsigned)(high >> 16) & 0xffff, (unsigned)high & 0xfff,
           (unsigned)(0x8000 | ((low >> 48) & 0x3fff)), (unsigned long long)(low & 0xffffffffffffULL));
}

/* The response head and the opening frames (connection_established, heartbeat) as one chunk, one write. */
static void start_stream(struct client *client) {
  time_t now = time(NULL);
  struct tm utc;
  gmtime_r(&now, &utc);
  char date[64];
  char timestamp[32];
  char id[37];
  strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &utc);
  strftime(timestamp, sizeof timestamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
  request_id(id);
  char frames[1024];
  int frames_length = snprintf(frames, sizeof frames,
                               "event: live-notification\ndata: {\"connection_will_close_in_seconds\":3600,\"request_id\":\"%s\","
                               "\"timestamp\":\"%s\",\"topic\":\"%s\",\"type\":\"connection_established\"}\n\n"
                               "event: heartbeat\ndata: {\"timestamp\":\"%s\",\"topic\":\"%s\"}\n\n",
                               id, timestamp, TOPIC, timestamp, TOPIC);
  char response[2048];
  int length = snprintf(response, sizeof response,
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: keep-alive\r\n"
                        "access-control-allow-origin: *\r\nx-accel-buffering: no\r\nDate: %s\r\nTransfer-Encoding: chunked\r\n\r\n"
                        "%x\r\n%s\r\n",
                        date, (unsigned)frames_length, frames);
  release(&client->request);
  client->slot = (long)stream_count;
  streams[stream_count++] = client->fd;
  send_bytes(client, response, (size_t)length);
}

/* An answer that ends the connection: a request this server cannot take. */
static void refuse(struct client *client, const char *status) {
  char response[256];
  int length = snprintf(response, sizeof response, "HTTP/1.1 %s\r\ncontent-length: 0\r\nconnection: close\r\n\r\n", status);
  /* Best effort: the connection closes right after. */
  ssize_t ignored = write(client->fd, response, (size_t)length);
  (void)ignored;
  close_client(client);
}

/* The value of header `name` in the head (lines after the request line), or NULL. */
static const char *header_value(const char *head, size_t head_length, const char *name, size_t *value_length) {
  size_t name_length = strlen(name);
  const char *end = head + head_length;
  const char *line = memchr(head, '\n', head_length);
  while (line != NULL && line + 1 < end) {
    line++;
    const char *line_end = memchr(line, '\n', (size_t)(end - line));
    if (line_end == NULL) line_end = end;
    if ((size_t)(line_end - line) > name_length && line[name_length] == ':' && strncasecmp(line, name, name_length) == 0) {
      const char *value = line + name_length + 1;
      while (value < line_end && (*value == ' ' || *value == '\t')) value++;
      const char *value_end = line_end;
      while (value_end > value && (value_end[-1] == '\r' || value_end[-1] == ' ' || value_end[-1] == '\t')) value_end--;
      *value_length = (size_t)(value_end - value);
      return value;
    }
    line = line_end;
  }
  return NULL;
}

/* Once the head is complete: how long the body is, or a refusal. Returns 0 when the request is taken. */
static int read_head(struct client *client, const char *head_end) {
  client->head_length = (size_t)(head_end - client->request.bytes) + 4;
  size_t length;
  if (header_value(client->request.bytes, client->head_length, "transfer-encoding", &length) != NULL) {
    refuse(client, "411 Length Required");
    return -1;
  }
  const char *value = header_value(client->request.bytes, client->head_length, "content-length", &length);
  client->body_length = 0;
  if (value != NULL) {
    char digits[24];
    if (length == 0 || length >= sizeof digits || strspn(value, "0123456789") < length) {
      refuse(client, "400 Bad Request");
      return -1;
    }
    memcpy(digits, value, length);
    digits[length] = '\0';
    unsigned long long body = strtoull(digits, NULL, 10);
    if (body > MAX_BODY_BYTES) {
      refuse(client, "413 Content Too Large");
      return -1;
    }
    client->body_length = (size_t)body;
  }
  return 0;
}

static void on_request_bytes(struct client *client) {
  char chunk[16384];
  for (;;) {
    ssize_t got = read(client->fd, chunk, sizeof chunk);
    if (got == 0) {
      close_client(client);
      return;
    }
    if (got < 0) {
      if (errno == EAGAIN) return;
      if (errno == EINTR) continue;
      close_client(client);
      return;
    }
    if (client->slot >= 0) continue; /* A stream's client has nothing more to say: discarded. */
    append(&client->request, chunk, (size_t)got);
    if (client->head_length == 0) {
      const char *head_end = memmem(client->request.bytes, client->request.length, "\r\n\r\n", 4);
      if (head_end == NULL) {
        if (client->request.length > MAX_HEAD_BYTES) {
          refuse(client, "431 Request Header Fields Too Large");
          return;
        }
        continue;
      }
      if (read_head(client, head_end) < 0) return;
    }
    if (client->request.length >= client->head_length + client->body_length) {
      start_stream(client);
      /* The client may be gone (its socket failed); nothing more to read from it here either way. */
      return;
    }
  }
}

static void on_client_event(uint64_t tag, uint32_t events) {
  int fd = (int)(uint32_t)tag;
  struct client *client = (size_t)fd < max_fds ? clients_by_fd[fd] : NULL;
  /* Closed earlier in this batch of events (and perhaps the descriptor reused since). */
  if (client == NULL || client->generation != (uint32_t)(tag >> 32)) return;
  if (events & (EPOLLERR | EPOLLHUP)) {
    close_client(client);
    return;
  }
  if (events & EPOLLOUT) {
    flush_unsent(client);
    if (clients_by_fd[fd] != client) return;
  }
  if (events & (EPOLLIN | EPOLLRDHUP)) on_request_bytes(client);
}

static void accept_clients(int listener) {
  for (;;) {
    int fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EAGAIN) return;
      if (errno == EINTR || errno == ECONNABORTED) continue;
      /* Out of descriptors or memory: the floor cannot hold the load, and says so. */
      die("accept");
    }
    if ((size_t)fd >= max_fds) {
      errno = EMFILE;
      die("accept");
    }
    int on = 1;
    /* Like Node's servers (aviso, the bare server): a frame goes out when written. */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    struct client *client = calloc(1, sizeof *client);
    if (client == NULL) die("out of memory");
    client->fd = fd;
    client->generation = next_generation++;
    client->slot = -1;
    clients_by_fd[fd] = client;
    watch(client, EPOLL_CTL_ADD, EPOLLIN | EPOLLRDHUP);
  }
}

/* Frames of the publishes read so far and not yet written. */
static struct buffer pending_frames;

/* One chunk per frame, built once, for every client. */
static void queue_frame(const char *json, size_t json_length) {
  size_t data_length = sizeof FRAME_HEAD - 1 + json_length + sizeof FRAME_TAIL - 1;
  char size_line[32];
  int size_length = snprintf(size_line, sizeof size_line, "%zx\r\n", data_length);
  append(&pending_frames, size_line, (size_t)size_length);
  append(&pending_frames, FRAME_HEAD, sizeof FRAME_HEAD - 1);
  append(&pending_frames, json, json_length);
  append(&pending_frames, FRAME_TAIL, sizeof FRAME_TAIL - 1);
  append(&pending_frames, "\r\n", 2);
}

static void write_frames(void) {
  if (pending_frames.length == 0) return;
  /* Downwards: a closed stream's place is taken by the last one, which has had the frames already. */
  for (size_t i = stream_count; i > 0; i--) send_bytes(clients_by_fd[streams[i - 1]], pending_frames.bytes, pending_frames.length);
  pending_frames.length = 0;
}

static void answer(const char *line) {
  size_t length = strlen(line);
  while (length > 0) {
    ssize_t written = write(STDOUT_FILENO, line, length);
    if (written < 0) {
      if (errno == EINTR) continue;
      die("stdout");
    }
    line += written;
    length -= (size_t)written;
  }
}

static void run_command(char *line, size_t length) {
  static const char PUBLISH[] = "publish ";
  if (length >= sizeof PUBLISH - 1 && memcmp(line, PUBLISH, sizeof PUBLISH - 1) == 0) {
    queue_frame(line + sizeof PUBLISH - 1, length - (sizeof PUBLISH - 1));
  } else if (length == 5 && memcmp(line, "count", 5) == 0) {
    /* Counted after every publish before it was written (a client may have closed meanwhile). */
    write_frames();
    char reply[48];
    snprintf(reply, sizeof reply, "clients %zu\n", stream_count);
    answer(reply);
  } else {
    fprintf(stderr, "c-fanout-server: unknown command %.*s\n", (int)(length > 80 ? 80 : length), line);
    exit(2);
  }
}

static void on_commands(struct buffer *pending) {
  char chunk[65536];
  for (;;) {
    ssize_t got = read(STDIN_FILENO, chunk, sizeof chunk);
    if (got == 0) exit(0); /* The bench went away. */
    if (got < 0) {
      if (errno == EAGAIN) break;
      if (errno == EINTR) continue;
      die("stdin");
    }
    append(pending, chunk, (size_t)got);
  }
  size_t start = 0;
  while (start < pending->length) {
    char *newline = memchr(pending->bytes + start, '\n', pending->length - start);
    if (newline == NULL) break;
    run_command(pending->bytes + start, (size_t)(newline - (pending->bytes + start)));
    start = (size_t)(newline - pending->bytes) + 1;
  }
  write_frames();
  if (start > 0) drop_front(pending, start);
  if (pending->length > MAX_COMMAND_BYTES) {
    fprintf(stderr, "c-fanout-server: a command line longer than %d bytes\n", MAX_COMMAND_BYTES);
    exit(2);
  }
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  /* As Node and nginx's worker_rlimit_nofile do: every descriptor the hard limit allows. */
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) < 0) die("getrlimit");
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
  if (getrlimit(RLIMIT_NOFILE, &limit) < 0) die("getrlimit");
  max_fds = limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > (1u << 20) ? (1u << 20) : (size_t)limit.rlim_cur;
  clients_by_fd = calloc(max_fds, sizeof *clients_by_fd);
  streams = calloc(max_fds, sizeof *streams);
  if (clients_by_fd == NULL || streams == NULL) die("out of memory");
  random_state = ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid() ^ 0x9e3779b97f4a7c15ULL;

  int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listener < 0) die("socket");
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = 0};
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listener, (struct sockaddr *)&address, sizeof address) < 0) die("bind");
  /* The bare server's backlog. */
  if (listen(listener, 511) < 0) die("listen");
  socklen_t address_length = sizeof address;
  if (getsockname(listener, (struct sockaddr *)&address, &address_length) < 0) die("getsockname");

  int flags = O_NONBLOCK;
  if (fcntl(STDIN_FILENO, F_SETFL, flags) < 0) die("stdin");
  epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd < 0) die("epoll_create1");
  struct epoll_event event = {.events = EPOLLIN, .data.u64 = LISTENER_TAG};
  if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listener, &event) < 0) die("epoll_ctl listener");
  event.data.u64 = COMMANDS_TAG;
  if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, STDIN_FILENO, &event) < 0) die("epoll_ctl stdin (it must be a pipe)");

  char ready[48];
  snprintf(ready, sizeof ready, "ready %u\n", (unsigned)ntohs(address.sin_port));
  answer(ready);

  struct buffer commands = {0};
  struct epoll_event events[EVENTS_PER_WAIT];
  for (;;) {
    int count = epoll_wait(epoll_fd, events, EVENTS_PER_WAIT, -1);
    if (count < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    for (int i = 0; i < count; i++) {
      uint64_t tag = events[i].data.u64;
      if (tag == LISTENER_TAG) accept_clients(listener);
      else if (tag == COMMANDS_TAG) on_commands(&commands);
      else on_client_event(tag, events[i].events);
    }
  }
}
