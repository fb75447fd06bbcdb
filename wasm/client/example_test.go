package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// Connect to a local edge (`make run` serves app "demo") and publish.
func ExampleDial() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, "ws://127.0.0.1:8080", &client.Options{
		AppKey: "demo",
		OnState: func(s client.State) {
			log.Println("sluice:", s) // connecting, connected, disconnected, reconnecting, ...
		},
	})
	if re, ok := rtm.AsError(err); ok && re.Code == rtm.CodeInvalidAppkey {
		log.Fatal("the edge does not know this appkey")
	}
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(c.State())
}

// Authenticate as a role with its secret (role_secret), or pass a JWT in
// Options.Token instead.
func ExampleDial_role() {
	ctx := context.Background()
	c, err := client.Dial(ctx, "wss://edge.example.com", &client.Options{
		AppKey:     "demo",
		Role:       "publisher",
		RoleSecret: "the role's secret",
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
}

// Dial checks its arguments before it dials: a mistake there is an error
// wrapping ErrURL or ErrOptions, which no retry would fix.
func ExampleDial_invalid() {
	ctx := context.Background()
	_, err := client.Dial(ctx, "127.0.0.1:8080", &client.Options{AppKey: "demo"}) // no ws:// or wss://
	fmt.Println(errors.Is(err, client.ErrURL))
	_, err = client.Dial(ctx, "ws://127.0.0.1:8080", nil) // no appkey
	fmt.Println(errors.Is(err, client.ErrOptions))
	// Output:
	// true
	// true
}

func ExampleClient_Publish() {
	ctx := context.Background()
	c, err := client.Dial(ctx, "ws://127.0.0.1:8080", &client.Options{AppKey: "demo"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	type chat struct {
		User string `json:"user"`
		Text string `json:"text"`
	}
	pos, err := c.Publish(ctx, "chat", chat{User: "ann", Text: "hi"})
	if re, ok := rtm.AsError(err); ok && re.Code == rtm.CodeAuthorizationDenied {
		log.Fatal("this role may not publish to chat")
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("stored at", pos)
}

// Everyone subscribed but this client gets the message: it shows what
// it sent itself, and must not get it twice.
func ExampleExcludeSelf() {
	ctx := context.Background()
	c, err := client.Dial(ctx, "ws://127.0.0.1:8080", &client.Options{AppKey: "demo"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Publish(ctx, "chat", map[string]any{"text": "hi"}, client.ExcludeSelf()); err != nil {
		log.Fatal(err)
	}
}

func ExampleClient_Subscribe() {
	ctx := context.Background()
	c, err := client.Dial(ctx, "ws://127.0.0.1:8080", &client.Options{AppKey: "demo"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	sub, err := c.Subscribe(ctx, "chat", &client.SubscribeOptions{
		HistoryCount: 20, // start with the last 20 messages
		OnError: func(err error) {
			// out_of_sync: the handler fell too far behind.
			log.Println("chat subscription ended:", err)
		},
	}, func(m client.Message) {
		fmt.Println(m.Value) // map[text:hi user:ann]
	})
	if err != nil {
		log.Fatal(err)
	}
	<-sub.Done()
	if !errors.Is(sub.Err(), client.ErrClosed) {
		log.Println(sub.Err())
	}
}

// Carry on after the edge lost the position to resume from (it restarted
// without persistence, say): by default the subscription continues from
// the oldest message the edge has, and OnGap says messages may be missing,
// before the first message after the gap. Strict ends it with
// expired_position instead.
func ExampleSubscribeOptions_onGap() {
	ctx := context.Background()
	c, err := client.Dial(ctx, "ws://127.0.0.1:8080", &client.Options{AppKey: "demo"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	_, err = c.Subscribe(ctx, "chat", &client.SubscribeOptions{
		OnGap: func(g client.Gap) {
			log.Printf("%s: messages from %v to %v may be missing (%s)", g.Channel, g.Requested, g.Resumed, g.Reason)
		},
	}, func(m client.Message) { fmt.Println(m.Value) })
	if err != nil {
		log.Fatal(err)
	}
}

// Resume where a previous subscription stopped, even in another process:
// Subscription.Position is the position after the last message handled.
func ExampleSubscription_Position() {
	ctx := context.Background()
	c, err := client.Dial(ctx, "ws://127.0.0.1:8080", &client.Options{AppKey: "demo"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	sub, err := c.Subscribe(ctx, "orders", nil, func(m client.Message) {})
	if err != nil {
		log.Fatal(err)
	}
	// ... later:
	next := sub.Position()
	if err := sub.Unsubscribe(ctx); err != nil {
		log.Fatal(err)
	}
	_, err = c.Subscribe(ctx, "orders", &client.SubscribeOptions{Position: &next}, func(m client.Message) {})
	if err != nil {
		log.Fatal(err)
	}
}

func ExampleClient_Read() {
	ctx := context.Background()
	c, err := client.Dial(ctx, "ws://127.0.0.1:8080", &client.Options{AppKey: "demo"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(ctx, "config/theme", "dark"); err != nil {
		log.Fatal(err)
	}
	v, pos, err := c.Read(ctx, "config/theme")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v, "at", pos)
}
