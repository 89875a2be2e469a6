// The official Go client (github.com/openai/openai-go), unchanged, against a live portcullis gateway
// (started by test/clients/go.test.ts). It makes a plain call and a streamed call with usage, the stream
// read through the SDK's ChatCompletionAccumulator (which adds usage up across chunks), and prints one JSON
// object with the text and token counts each reported; the mocha test asserts on it. The gateway's base
// URL and a token come from PORTCULLIS_BASE_URL and PORTCULLIS_TOKEN.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

type counts struct {
	Prompt     int64 `json:"prompt"`
	Completion int64 `json:"completion"`
	Total      int64 `json:"total"`
}

type result struct {
	Text  string `json:"text"`
	Usage counts `json:"usage"`
}

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
	os.Exit(1)
}

func main() {
	ctx := context.Background()
	client := openai.NewClient(
		option.WithBaseURL(os.Getenv("PORTCULLIS_BASE_URL")+"/"),
		option.WithAPIKey(os.Getenv("PORTCULLIS_TOKEN")),
		option.WithMaxRetries(0),
	)
	prompt := os.Args[1]
	out := map[string]result{}

	res, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:     "shared-general-a",
		MaxTokens: openai.Int(2048),
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("plain " + prompt)},
	})
	if err != nil {
		fail("plain call", err)
	}
	out["plain"] = result{res.Choices[0].Message.Content, counts{res.Usage.PromptTokens, res.Usage.CompletionTokens, res.Usage.TotalTokens}}

	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:         "shared-general-a",
		MaxTokens:     openai.Int(2048),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("stream " + prompt)},
	})
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		fail("streamed call", err)
	}
	out["stream"] = result{acc.Choices[0].Message.Content, counts{acc.Usage.PromptTokens, acc.Usage.CompletionTokens, acc.Usage.TotalTokens}}

	line, _ := json.Marshal(out)
	fmt.Println(string(line))
}
