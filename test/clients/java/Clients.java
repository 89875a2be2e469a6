// The official Java client (com.openai:openai-java, pinned in pom.xml), unchanged, against a live portcullis
// gateway (started by test/clients/java.test.ts). It makes a plain call, a streamed call with usage and one
// without, each stream read through the SDK's ChatCompletionAccumulator (which takes a chunk with usage for
// the last one), and prints one JSON object with the text and token counts each reported; the mocha test
// asserts on it. The gateway's base URL and a token come from PORTCULLIS_BASE_URL and PORTCULLIS_TOKEN.
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.helpers.ChatCompletionAccumulator;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.completions.CompletionUsage;
import java.util.LinkedHashMap;
import java.util.Map;

public final class Clients {
  private static Map<String, Object> report(ChatCompletion c) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("text", c.choices().get(0).message().content().orElse(""));
    out.put("usage", c.usage().map(Clients::counts).orElse(null));
    return out;
  }

  private static Map<String, Long> counts(CompletionUsage u) {
    return Map.of("prompt", u.promptTokens(), "completion", u.completionTokens(), "total", u.totalTokens());
  }

  private static ChatCompletionCreateParams.Builder params(String prompt) {
    return ChatCompletionCreateParams.builder().model("shared-general-a").maxCompletionTokens(2048).addUserMessage(prompt);
  }

  private static ChatCompletion stream(OpenAIClient client, ChatCompletionCreateParams params) {
    ChatCompletionAccumulator acc = ChatCompletionAccumulator.create();
    try (StreamResponse<ChatCompletionChunk> s = client.chat().completions().createStreaming(params)) {
      s.stream().forEach(acc::accumulate);
    }
    return acc.chatCompletion();
  }

  public static void main(String[] args) throws Exception {
    OpenAIClient client = OpenAIOkHttpClient.builder()
        .baseUrl(System.getenv("PORTCULLIS_BASE_URL"))
        .apiKey(System.getenv("PORTCULLIS_TOKEN"))
        .maxRetries(0)
        .build();
    String prompt = args[0];
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("plain", report(client.chat().completions().create(params("plain " + prompt).build())));
    ChatCompletionStreamOptions usage = ChatCompletionStreamOptions.builder().includeUsage(true).build();
    out.put("stream", report(stream(client, params("stream " + prompt).streamOptions(usage).build())));
    out.put("streamNoUsage", report(stream(client, params("stream without usage " + prompt).build())));
    client.close();
    System.out.println(new ObjectMapper().writeValueAsString(out));
  }
}
