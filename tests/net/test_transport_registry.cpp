// The transport registry (core/include/wheelfit/net/registry.hpp): registration and its
// refusals, the routing by scheme, the decorators' order, the unknown-scheme message, and the
// built-ins as wheelfit::transports::register_transports registers them.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "support/memory_transport.hpp"
#include "wheelfit/net/registry.hpp"
#include "wheelfit/transports/register.hpp"

using namespace wheelfit;

namespace {

// Answers every URL with its own name: which transport a request reached.
std::unique_ptr<net::Transport> named_transport(const std::string& name) {
  auto origin = std::make_shared<test::MemoryOrigin>();
  origin->handle([name](const net::Request& request) -> std::optional<Expected<net::Response>> {
    return net::Response{request.url, "text/plain", name, 200, {}, false};
  });
  return test::MemoryOrigin::transport_over(origin);
}

// Wraps a stack, appending its tag to every body: the order decorators were applied in.
class TagDecorator final : public net::Transport {
 public:
  TagDecorator(std::unique_ptr<net::Transport> inner, std::string tag) : inner_(std::move(inner)), tag_(std::move(tag)) {}

 private:
  Expected<net::Response> get_impl(const net::Request& request) override {
    auto r = inner_->get(request);
    if (r) r->body += "+" + tag_;
    return r;
  }
  std::unique_ptr<net::Transport> inner_;
  std::string tag_;
};

net::TransportEntry named(std::string name, std::vector<std::string> schemes) {
  return {name, std::move(schemes), [name](const net::StackOptions&) -> Expected<std::unique_ptr<net::Transport>> {
            return named_transport(name);
          }};
}

net::DecoratorEntry tagging(std::string tag, int order) {
  return {tag, order, [tag](std::unique_ptr<net::Transport> inner, const net::StackOptions&)
                          -> Expected<std::unique_ptr<net::Transport>> {
            return std::unique_ptr<net::Transport>(std::make_unique<TagDecorator>(std::move(inner), tag));
          }};
}

std::string body_of(net::Transport& t, const std::string& url) {
  auto r = t.get({url});
  REQUIRE(r);
  return r->body;
}

}  // namespace

TEST_CASE("net::scheme_of: the lower-cased scheme, or none for a path", "[transport][registry]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"https://h/x", "https"}, {"HTTP://h/", "http"}, {"mem://index/simple/", "mem"}, {"s3+tls://b/k", "s3+tls"},
      {"file:///tmp/x", "file"}, {"/tmp/index", ""},   {"relative/dir", ""},           {"://nothing", ""},
      {"1ab://x", ""},          {"a b://x", ""},      {"C:\\index", ""}};
  for (const auto& [url, scheme] : cases) {
    CAPTURE(url);
    CHECK(net::scheme_of(url) == scheme);
  }
}

TEST_CASE("net::Registry: a stack routes each request to the transport of its scheme", "[transport][registry]") {
  net::Registry reg;
  REQUIRE(reg.add_transport(named("file", {"file"})));
  REQUIRE(reg.add_transport(named("web", {"http", "HTTPS"})));
  REQUIRE(reg.add_transport(named("memory", {"mem"})));
  CHECK(reg.schemes() == std::vector<std::string>{"file", "http", "https", "mem"});

  auto stack = reg.make("mem://idx/simple/", {});
  REQUIRE(stack);
  CHECK(body_of(**stack, "mem://idx/simple/a/") == "memory");
  CHECK(body_of(**stack, "https://h/simple/") == "web");
  CHECK(body_of(**stack, "HTTP://h/simple/") == "web");
  CHECK(body_of(**stack, "/srv/index/a/") == "file");  // a plain path is the file transport's

  SECTION("a batch goes to each transport in its place, unknown schemes answered in theirs") {
    const auto answers = (*stack)->get_many({{"https://h/a/"}, {"ftp://h/b"}, {"mem://i/c/"}, {"file:///d/"}});
    REQUIRE(answers.size() == 4);
    CHECK(answers[0]->body == "web");
    REQUIRE_FALSE(answers[1]);
    CHECK(answers[1].error().code == make_error_code(Errc::usage));
    CHECK(answers[2]->body == "memory");
    CHECK(answers[3]->body == "file");
  }
}

TEST_CASE("net::Registry: decorators wrap the stack in their order", "[transport][registry]") {
  net::Registry reg;
  REQUIRE(reg.add_transport(named("memory", {"mem"})));
  REQUIRE(reg.add_decorator(tagging("outer", 20)));
  REQUIRE(reg.add_decorator(tagging("inner", 10)));
  REQUIRE(reg.add_decorator(tagging("inner-too", 10)));  // same order: registration order
  CHECK(reg.decorators() == std::vector<std::string>{"inner", "inner-too", "outer"});
  auto stack = reg.make("mem://i/", {});
  REQUIRE(stack);
  CHECK(body_of(**stack, "mem://i/a/") == "memory+inner+inner-too+outer");

  SECTION("a decorator that does not apply hands the stack back as it is") {
    net::Registry plain;
    REQUIRE(plain.add_transport(named("memory", {"mem"})));
    REQUIRE(plain.add_decorator({"cache-when-asked", 5,
                                 [](std::unique_ptr<net::Transport> inner, const net::StackOptions& o)
                                     -> Expected<std::unique_ptr<net::Transport>> {
                                   if (!o.cache) return inner;
                                   return std::unique_ptr<net::Transport>(std::make_unique<TagDecorator>(std::move(inner), "cached"));
                                 }}));
    auto bare = plain.make("mem://i/", {});
    REQUIRE(bare);
    CHECK(body_of(**bare, "mem://i/a/") == "memory");
    net::StackOptions with_cache;
    with_cache.cache = net::CacheOptions{};
    auto cached = plain.make("mem://i/", with_cache);
    REQUIRE(cached);
    CHECK(body_of(**cached, "mem://i/a/") == "memory+cached");
  }
}

TEST_CASE("net::Registry: an unknown scheme names itself and the registered ones", "[transport][registry]") {
  net::Registry reg;
  REQUIRE(reg.add_transport(named("web", {"http", "https"})));
  REQUIRE(reg.add_transport(named("file", {"file"})));
  CHECK(reg.reads("https://h/"));
  CHECK(reg.reads("/a/path"));
  CHECK_FALSE(reg.reads("gopher://h/"));
  auto made = reg.make("gopher://u:secret@h/simple/", {});
  REQUIRE_FALSE(made);
  CHECK(made.error().code == make_error_code(Errc::usage));
  CHECK(made.error().message == "no transport reads the scheme 'gopher' (gopher://u:***@h/simple/); registered: file, http, https");
  auto checked = reg.check("s3://bucket/simple/", "--index: ");
  REQUIRE_FALSE(checked);
  CHECK(checked.error().message == "--index: no transport reads the scheme 's3' (s3://bucket/simple/); registered: file, http, https");

  SECTION("an empty registry says how to fill it") {
    net::Registry empty;
    auto none = empty.make("https://h/", {});
    REQUIRE_FALSE(none);
    CHECK_THAT(none.error().message, Catch::Contains("registered: none (register the transports at start-up"));
  }
}

TEST_CASE("net::Registry: clashing registrations are refused, naming what clashes", "[transport][registry]") {
  net::Registry reg;
  REQUIRE(reg.add_transport(named("web", {"http", "https"})));
  REQUIRE(reg.add_decorator(tagging("cache", 10)));
  const std::vector<std::pair<Expected<void>, std::string>> cases = {
      {reg.add_transport(named("other-web", {"HTTPS"})), "transport 'other-web': the scheme 'https' is already read by transport 'web'"},
      {reg.add_transport(named("web", {"web"})), "transport 'web' is already registered"},
      {reg.add_transport(named("bad", {"not a scheme"})), "transport 'bad': 'not a scheme' is not a URL scheme"},
      {reg.add_transport(named("none", {})), "transport 'none': no scheme"},
      {reg.add_transport({"nofactory", {"x"}, nullptr}), "transport 'nofactory': no factory"},
      {reg.add_transport(named("", {"y"})), "a transport needs a name"},
      {reg.add_decorator(tagging("cache", 1)), "decorator 'cache' is already registered"},
  };
  for (const auto& [result, message] : cases) {
    CAPTURE(message);
    REQUIRE_FALSE(result);
    CHECK(result.error().code == make_error_code(Errc::invalid_input));
    CHECK(result.error().message == message);
  }
  CHECK(reg.schemes() == std::vector<std::string>{"http", "https"});  // nothing of a refusal stays
  CHECK(reg.set_http_rules({}));
  CHECK_FALSE(reg.set_http_rules({}));
}

TEST_CASE("transports::register_transports: the built-ins, once", "[transport][registry]") {
  net::Registry reg;
  REQUIRE(transports::register_transports(reg));
  CHECK(reg.schemes() == std::vector<std::string>{"file", "http", "https"});
  CHECK(reg.decorators() == std::vector<std::string>{"cache"});
  CHECK(reg.http_rules());
  CHECK(reg.cache_keeping());
  REQUIRE(reg.http_rules());
  CHECK(reg.http_rules()->insecure_allowed);  // what the Releases failover (index/releases.hpp) asks
  auto again = transports::register_transports(reg);
  REQUIRE_FALSE(again);
  CHECK(again.error().message == "transport 'file' is already registered");
}
