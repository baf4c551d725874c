"""What the offline planner says, in Chinese and English.

Kept apart from the logic so both languages stay side by side and complete.
"""

from __future__ import annotations

from typing import Final

from agent_core.lang import pick

_TEXTS: Final[dict[str, dict[str, str]]] = {
    "intro": {
        "zh": "[offline planner] 我是离线规划器：没有连接大模型，按规则理解你的需求，用内置的沙盒数据查火车、航班、酒店和景点。"
              "我不能订票、不能查实时余票和价格，也听不懂太复杂的要求；需要时我会问你。",
        "en": "[offline planner] I am the offline planner: no language model is connected, so I read your request by rules and "
              "search the built-in sandbox data for trains, flights, hotels and sights. I cannot book, see live seats or prices, "
              "or follow very elaborate wishes; I will ask when I need to.",
    },
    "ask_destination": {
        "zh": "你想去哪个城市？",
        "en": "Which city would you like to go to?",
    },
    "ask_destination_again": {
        "zh": "抱歉，我还是没认出目的地。请直接写城市名，例如“上海”或“成都”。",
        "en": "Sorry, I still could not tell the destination. Please write just the city name, for example \"Shanghai\" or \"Chengdu\".",
    },
    "team_same_name": {
        "zh": "这个团队里有两位都叫「{name}」，我分不清谁是谁。请用 @提及 或全名区分他们，再发一次请求。",
        "en": "Two travellers of this team are both called \"{name}\", so I cannot tell them apart. Please use their @mentions or full names and send the request again.",
    },
    "ask_home": {
        "zh": "{who}，你从哪个城市出发？",
        "en": "{who}, which city are you leaving from?",
    },
    "ask_origin": {
        "zh": "你从哪个城市出发？",
        "en": "Which city are you leaving from?",
    },
    "ask_date": {
        "zh": "你打算哪天出发？（例如：明天、下周五、12月5日）",
        "en": "Which day do you want to leave? (for example: tomorrow, next Friday, Dec 5)",
    },
    "ask_date_noted": {
        "zh": "好的，记下了：“{noted}”。还差出发日期：{question}",
        "en": "Noted: \"{noted}\". One thing is still missing: {question}",
    },
    "ask_date_again": {
        "zh": "我没看懂这个日期。请写成“12月5日”或“2026-12-05”这样的格式。",
        "en": "I could not read that date. Please write it like \"Dec 5\" or \"2026-12-05\".",
    },
    "ask_unknown_place": {
        "zh": "我没找到“{name}”这个地方。你是指下面哪一个？如果都不是，请换个写法。",
        "en": "I could not find \"{name}\". Did you mean one of these? If not, please write it another way.",
    },
    "ask_city_in_region": {
        "zh": "{name}有好几个城市可去，你想去哪一个？",
        "en": "{name} has several cities to go to. Which one would you like?",
    },
    "ask_ambiguous_place": {
        "zh": "“{name}”对应好几个地方，你指的是哪一个？",
        "en": "\"{name}\" matches several places. Which one do you mean?",
    },
    "ask_landmark": {
        "zh": "{city}有好几个“{name}”，酒店要住在哪一个附近？",
        "en": "There are several \"{name}\" in {city}. Which one should the hotel be near?",
    },
    "unknown_place": {
        "zh": "抱歉，我的离线数据里没有“{name}”这个地方，没法为它规划。我认识中国的主要城市（包括所有省会）和世界上约40个大城市；"
              "你可以换一个城市，或者写出它附近的大城市。",
        "en": "Sorry, \"{name}\" is not in my offline data, so I cannot plan a trip there. I know China's major cities (every "
              "provincial capital among them) and about 40 big cities worldwide; try another city, or the nearest big city.",
    },
    "no_destination": {
        "zh": "抱歉，我没能弄清你想去哪里，所以这次没法规划。告诉我目的地城市和出发日期，我就能重新开始。",
        "en": "Sorry, I could not work out where you want to go, so I cannot plan this time. Tell me the destination city and the day you leave, and I will start again.",
    },
    "no_date": {
        "zh": "抱歉，我没能确定出发日期，所以这次没法规划。发一句像“12月5日从北京去上海玩两天”这样的话，我就能重新开始。",
        "en": "Sorry, I could not settle the travel date, so I cannot plan this time. Send something like \"Beijing to Shanghai on Dec 5 for 2 days\" and I will start again.",
    },
    "past_date": {
        "zh": "抱歉，{day}已经过去了（今天是{today}），没法为过去的日期规划行程。要不要改成{suggest}出发？告诉我新的日期就行。",
        "en": "Sorry, {day} has already passed (today is {today}), so I cannot plan a trip for it. Shall we leave on {suggest} instead? Just tell me the new date.",
    },
    "same_city": {
        "zh": "出发地和目的地都是{city}。我目前只规划城市之间的行程；告诉我另一个出发地或目的地，我就能规划。",
        "en": "The origin and the destination are both {city}. I only plan trips between cities for now; tell me a different origin or destination and I will plan it.",
    },
    "no_transport": {
        "zh": "抱歉，沙盒数据里 {day} 没有从{origin}到{destination}的火车或航班，这个行程没法规划。可以换个日期或换个出发城市试试。",
        "en": "Sorry, the sandbox data has no train or flight from {origin} to {destination} on {day}, so I cannot plan this trip. Try another date or another origin.",
    },
    "plan_refused": {
        "zh": "抱歉，我拼出的行程没有通过检查（{reason}），这次没法给出可靠的计划。请换个说法再试一次。",
        "en": "Sorry, the plan I put together did not pass its checks ({reason}), so I cannot give a reliable plan this time. Please try rephrasing.",
    },
    "nothing_new": {
        "zh": "不客气！如果想调整，可以直接说，比如“便宜一点”“改坐飞机”“多住一晚”“改到下周六”。",
        "en": "You're welcome! To change the plan, just say so, for example \"make it cheaper\", \"fly instead\", \"one more night\" or \"move it to next Saturday\".",
    },
    "not_understood": {
        "zh": "抱歉，我没看懂这句话。想调整刚才的行程可以直接说，比如“便宜一点”“改坐飞机”“多住一晚”；想规划另一次出行，请告诉我从哪里到哪里、哪天、玩几天，比如“下周五北京去杭州，玩两天”。",
        "en": "Sorry, I did not understand that. To change the plan, say so, for example \"make it cheaper\", \"fly instead\" or \"one more night\"; to plan another trip, tell me from where to where, when and for how long, for example \"Beijing to Hangzhou next Friday, 2 days\".",
    },
    "sandbox_note": {
        "zh": "车次、航班、酒店和景点均来自内置沙盒数据（按真实地理生成，非实时），出行前请在官方渠道核实并购票。",
        "en": "Trains, flights, hotels and sights come from the built-in sandbox data (generated from real geography, not live); check and book through official channels before you go.",
    },
    "mixed_note": {
        "zh": "部分车次、航班、酒店或景点来自内置沙盒数据（按真实地理生成，非实时），其余来自实时数据源；出行前请在官方渠道核实并购票。",
        "en": "Some of the trains, flights, hotels or sights come from the built-in sandbox data (generated from real geography, not live), the rest from live sources; check and book through official channels before you go.",
    },
    "live_note": {
        "zh": "车次、航班、酒店和景点来自实时数据源，价格和余票随时会变；出行前请在官方渠道核实并购票。",
        "en": "Trains, flights, hotels and sights come from live sources; prices and seats change quickly, so check and book through official channels before you go.",
    },
    "origin_default": {
        "zh": "你没说出发地，我按你的位置{city}出发来规划；如果不对，告诉我出发城市。",
        "en": "You did not say where you leave from, so I planned from your location, {city}; tell me if that is wrong.",
    },
    "one_destination": {
        "zh": "离线规划器一次只规划一个目的地：这份行程只含{city}，没有{skipped}。要去{next}，可以再发一条，比如“从{city}去{next}玩两天”。",
        "en": "The offline planner plans one destination at a time: this plan covers {city}, not {skipped}. For {next}, send another request, e.g. “from {city} to {next} for 2 days”.",
    },
    "length_default": {
        "zh": "你没说玩几天，我按{days}天{nights}晚安排；想改就告诉我。",
        "en": "You did not say how long, so I planned a {days}-day trip; tell me to change it.",
    },
    "over_budget": {
        "zh": "按沙盒价格，这个行程约{total}元，超出你{budget}元的预算；已经选了更便宜的选项，还可以少住一晚或换成经济型酒店。",
        "en": "At sandbox prices this trip costs about {total} CNY, over your budget of {budget} CNY; I already chose cheaper options. Staying one night less or picking a budget hotel would save more.",
    },
    "within_budget": {
        "zh": "合计约{total}元，在{budget}元预算之内。",
        "en": "About {total} CNY in total, within your budget of {budget} CNY.",
    },
    "ask_date_in_month": {
        "zh": "{month}哪天出发？",
        "en": "Which day in {month} do you want to leave?",
    },
    "ask_weekday": {
        "zh": "{day}是{actual}，不是{said}。你想哪天出发？",
        "en": "{day} is a {actual}, not a {said}. Which day do you want to leave?",
    },
    "nothing_changed": {
        "zh": "这份行程已经是这样了，不用改。想换别的，可以说“多住一晚”“晚一天出发”“改坐飞机”等。",
        "en": "The plan already has that, so nothing changes. To change something else, say so, for example \"one more night\", \"a day later\" or \"fly instead\".",
    },
    "already_cheapest": {
        "zh": "这已经是沙盒里这些日期最便宜的安排了（约{total}元），行程保持不变。少住一晚或换个日期还能更省。",
        "en": "This is already the cheapest plan the sandbox has for these dates (about {total} CNY), so it stays as it was. One night less or another day could save more.",
    },
    "budget_kept": {
        "zh": "现在的行程约{total}元，已经在{budget}元预算之内，行程保持不变。",
        "en": "The plan costs about {total} CNY, within your budget of {budget} CNY, so it stays as it is.",
    },
    "over_budget_kept": {
        "zh": "沙盒里找不到更便宜的安排：行程约{total}元，超出{budget}元的预算。少住一晚或换个日期可以更省。行程保持不变。",
        "en": "The sandbox has nothing cheaper: the plan costs about {total} CNY, over your budget of {budget} CNY. One night less or another day would save more. The plan stays as it was.",
    },
    "plan_kept": {
        "zh": "行程保持不变。",
        "en": "The plan stays as it was.",
    },
    "cannot_unknown_place": {
        "zh": "抱歉，我的离线数据里没有“{name}”这个地方，没法改过去。",
        "en": "Sorry, \"{name}\" is not in my offline data, so I cannot change the trip to it.",
    },
    "cannot_past_date": {
        "zh": "抱歉，{day}已经过去了，没法改到这一天。",
        "en": "Sorry, {day} has already passed, so I cannot move the trip there.",
    },
    "cannot_too_short": {
        "zh": "行程现在是{nights}，没法再缩短这么多。",
        "en": "The trip is {nights} long, so it cannot be that much shorter.",
    },
    "home_stay": {
        "zh": "回家住，不订酒店，也不排景点：只安排来回的车票或机票。",
        "en": "You are staying with family: no hotel and no sightseeing, only the way there and back.",
    },
    "late_arrival": {
        "zh": "没有能在{by}前到达的车次或航班，这是最早能到的一班（{at}到）。",
        "en": "Nothing arrives by {by}; this is the earliest that does (arriving {at}).",
    },
    "cannot_back_before_start": {
        "zh": "回程日期{day}在出发日期{start}之前，没法这样改。",
        "en": "Coming back on {day} would be before leaving on {start}, so I cannot change the trip that way.",
    },
    "cannot_nobody_left": {
        "zh": "至少要有一个人出行，没法再减人了。",
        "en": "At least one person has to travel, so the party cannot be smaller.",
    },
    "cannot_who_joins": {
        "zh": "团队出行需要知道新加入的是谁、从哪里出发，比如“加上 @dan（武汉）”。",
        "en": "On a team trip I need to know who joins and from where, for example \"add Dan (Wuhan)\".",
    },
    "feedback_thanks": {
        "zh": "谢谢指出。",
        "en": "Thanks for telling me. ",
    },
    "how_to_change": {
        "zh": "想改哪里直接说，比如“便宜一点”“多住一晚”“晚一天出发”“改坐飞机”，我只改这一处。",
        "en": "To change anything, say what, for example \"make it cheaper\", \"one more night\", \"a day later\" or \"fly instead\", and I change only that.",
    },
    "breakdown": {
        "zh": "合计这样算：交通{rides} + 住宿{stays} + 门票每人{tickets} × {n}人 = {sum}，即合计{total}，人均约{each}。",
        "en": "The total adds up like this: rides {rides} + stay {stays} + tickets {tickets} per person × {n} = {sum}, the total of {total} (about {each} per person).",
    },
    "shares": {
        "zh": "每人分摊：{shares}。",
        "en": "Each traveller's share: {shares}.",
    },
    "why_ride": {
        "zh": "车次是这样选的（{rides}）：在你要求的出发时间里，选最早到达的，或晚到不超过一小时但更便宜的；要求便宜时，选当天能到的最便宜的。备选写在“备选”里。",
        "en": "How the rides were chosen ({rides}): within the times you asked for, the one that arrives first, or one arriving within the hour of it for less; when you ask for cheaper, the cheapest that still arrives the first day. The runners-up are under Backups.",
    },
    "why_hotel": {
        "zh": "酒店选的是{name}（每晚{rate}，{nights}）：在景点附近、按评分和价格挑性价比最高的；你要求的档次或早餐优先。",
        "en": "The hotel is {name} ({rate} a night, {nights}): the best rating for the price near the sights, with any class or breakfast you asked for first.",
    },
    "why_sights": {
        "zh": "这{count}个景点是沙盒里当地的知名景点，都安排在开放时间内，并且在到达之后、返程之前。",
        "en": "The {count} sights are the best-known places the sandbox has there, each visited while open, after you arrive and before the ride home.",
    },
    "times": {
        "zh": "出发和到达时间：{rides}。",
        "en": "The times: {rides}.",
    },
    "about_plan": {
        "zh": "这份行程：{title}，{start} → {end}，合计约{total}。",
        "en": "This plan: {title}, {start} → {end}, about {total} in total.",
    },
    "transport_switched_for": {
        "zh": "沙盒数据里{who}从{origin}出发没有{wanted}，这一位改用{used}。",
        "en": "The sandbox has no {wanted} for {who} from {origin}, so {who} goes by {used}.",
    },
    "transport_switched": {
        "zh": "沙盒数据里这段没有{wanted}，改用{used}。",
        "en": "The sandbox has no {wanted} for this route, so I used {used} instead.",
    },
}

TRANSPORT_NAMES: Final[dict[str, dict[str, str]]] = {
    "train": {"zh": "火车", "en": "train"},
    "flight": {"zh": "航班", "en": "flight"},
}


def say(key: str, lang: str, **values: object) -> str:
    return pick(_TEXTS[key], "zh" if lang == "zh" else "en", **values)
